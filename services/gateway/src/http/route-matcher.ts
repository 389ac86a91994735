// Labels a request refused before its route ran (an API key checked on a path prefix) with the pattern
// its path matches, so that the metrics' route label stays one of the table's patterns.
import { routeList } from './routes';

export interface RouteMatcher {
  /** The pattern whose path matches, whatever the method, or undefined. */
  match(path: string): string | undefined;
}

/** Matches plain segments and `:name` parameters, the only syntax the table's routes use. */
export function routeMatcher(): RouteMatcher {
  const patterns = [...new Set(routeList().map((route) => route.path))].map((pattern) => {
    const source = pattern
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return { pattern, regexp: new RegExp(`^${source}/?$`, 'i') };
  });
  return {
    match(path) {
      return patterns.find(({ regexp }) => regexp.test(path))?.pattern;
    },
  };
}

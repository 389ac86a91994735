// The hot routes, answered without express: a device's post, a fleet app's position read and the
// category read are nearly all of the traffic, and express 5's routing and request decoration cost more
// CPU per request than Node's HTTP server itself (an express hello-world spends about 95 µs a request on
// the bench host, the same answer from Node alone about 15 µs, security headers included).
//
// Which routes are taken here is the route table's `direct`; only a route's canonical form is: its exact
// path, its one method, nothing to decode. Any other request (HEAD, another method, a trailing slash or
// other letter case, a percent-encoded parameter, an unknown path) goes to the express app, which serves
// the same handlers behind the same access checks and front steps, so a request is answered alike
// whichever way it came.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { servedHandler, type AccessCheck } from './access';
import { pathOf, type Answer, type Middleware, type RouteHandler, type RouteHandlers } from './route-handler';
import { routeList } from './routes';

interface Found {
  handler: RouteHandler;
  /** The express pattern of the route, the label its metrics carry either way. */
  route: string;
  param: string;
}

/** A route with one parameter, as the text before and after it. */
interface ParamRoute {
  handler: RouteHandler;
  route: string;
  prefix: string;
  suffix: string;
}

/** One path segment that needs no decoding, or undefined. */
function plainSegment(segment: string): string | undefined {
  return segment !== '' && !segment.includes('/') && !segment.includes('%') ? segment : undefined;
}

/** The direct routes of the table, by method: exact paths in a map, parameterised ones as prefix and suffix. */
function directTable(handlers: RouteHandlers, check: AccessCheck) {
  const exact = new Map<string, Map<string, Found>>();
  const withParam = new Map<string, ParamRoute[]>();
  for (const route of routeList()) {
    if (!route.direct) continue;
    const method = route.method.toUpperCase();
    const handler = servedHandler(route, handlers, check);
    const at = route.path.indexOf('/:');
    if (at === -1) {
      if (!exact.has(method)) exact.set(method, new Map());
      exact.get(method)!.set(route.path, { handler, route: route.path, param: '' });
      continue;
    }
    const end = route.path.indexOf('/', at + 1);
    if (!withParam.has(method)) withParam.set(method, []);
    withParam
      .get(method)!
      .push({ handler, route: route.path, prefix: route.path.slice(0, at + 1), suffix: end === -1 ? '' : route.path.slice(end) });
  }

  return (method: string | undefined, path: string): Found | undefined => {
    if (method === undefined) return undefined;
    const found = exact.get(method)?.get(path);
    if (found) return found;
    for (const candidate of withParam.get(method) ?? []) {
      if (path.length <= candidate.prefix.length + candidate.suffix.length) continue;
      if (!path.startsWith(candidate.prefix) || !path.endsWith(candidate.suffix)) continue;
      const param = plainSegment(path.slice(candidate.prefix.length, path.length - candidate.suffix.length));
      if (param !== undefined) return { handler: candidate.handler, route: candidate.route, param };
    }
    return undefined;
  };
}

export interface DirectListenerOptions {
  app: Express;
  handlers: RouteHandlers;
  /** Each route's access check, as the express app runs it. */
  check: AccessCheck;
  /** The steps the express app also runs first, in its order. */
  front: readonly Middleware[];
  /** Answers an error as the express app's error handler does. */
  answerError: (error: unknown, req: IncomingMessage, res: Answer) => void;
}

/** The server's request listener: the direct routes, and the express app for everything else. */
export function directListener({ app, handlers, check, front, answerError }: DirectListenerOptions): RequestListener {
  const findRoute = directTable(handlers, check);
  return (req: IncomingMessage, res: ServerResponse) => {
    // A fragment (which clients do not send) is left to express's URL parsing.
    const found = req.url?.includes('#') ? undefined : findRoute(req.method, pathOf(req));
    if (!found) {
      void app(req, res);
      return;
    }
    const answer = Object.assign(res, { locals: { route: found.route } as Record<string, unknown> });
    // With the answer begun, the connection is closed as express's final handler does: the client sees it cut short.
    const fail = (error: unknown) => (answer.headersSent ? req.socket.destroy() : answerError(error, req, answer));
    const step = (index: number): void => {
      if (index === front.length) {
        found.handler(req, answer, found.param).catch(fail);
        return;
      }
      // A step that throws is answered as express answers a middleware that throws, not left to crash the process.
      try {
        front[index]!(req, answer, (error) => (error ? fail(error) : step(index + 1)));
      } catch (error) {
        fail(error);
      }
    };
    step(0);
  };
}

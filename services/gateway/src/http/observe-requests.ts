// Times every request, records it in the request histogram by route pattern (never the raw URL, so
// the label set stays bounded), counts error answers by their code, and logs one line per request at
// debug level. Info would cost throughput on the hot paths, so per-request lines appear only with
// LOG_LEVEL=debug; errors are logged by the error handler whatever the level.
import type { Request } from 'express';
import type { Logger } from '@fleet/shared/logger';
import type { GatewayMetrics } from '../metrics';
import { requestIdOf } from './request-id';
import { pathOf, type Answer, type Middleware } from './route-handler';
import { routeMatcher } from './route-matcher';

/** The nginx convention for a client that closed the connection before the response was sent. */
const CLIENT_CLOSED = 499;
const UNMATCHED = 'unmatched';

export function observeRequests(metrics: GatewayMetrics, logger: Logger): Middleware {
  const matcher = routeMatcher();

  // A direct route names its pattern in res.locals. Through express, a request refused by middleware
  // before its route ran (e.g. a missing API key) has no req.route; it is labelled with the pattern its
  // path matches.
  function routeOf(res: Answer): string {
    if (typeof res.locals.route === 'string') return res.locals.route;
    const req = res.req as Request;
    const route = req.route as { path?: unknown } | undefined;
    if (route && typeof route.path === 'string') return route.path;
    return matcher.match(pathOf(req)) ?? UNMATCHED;
  }

  // One function for every response, with the response as `this`: no closure per request.
  function onClose(this: Answer): void {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- `this` is the response; named for what it is
    const res = this;
    // A server's request always has its method; Node's type allows none for a client's.
    const method = res.req.method ?? '';
    const seconds = (performance.now() - (res.locals.startedAt as number)) / 1000;
    const status = res.writableFinished ? res.statusCode : CLIENT_CLOSED;
    const route = routeOf(res);
    metrics.observeRequest(method, route, status, seconds);
    const code = res.locals.errorCode as string | undefined;
    if (code) metrics.countErrorResponse(method, route, status, code);
    if (logger.isLevelEnabled('debug')) {
      logger.debug({ requestId: requestIdOf(res), method, route, status, durationMs: Math.round(seconds * 1e6) / 1e3 }, 'request');
    }
  }

  return (_req, res, next) => {
    res.locals.startedAt = performance.now();
    res.on('close', onClose);
    next();
  };
}

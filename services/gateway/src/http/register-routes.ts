// The route table (routes.ts) as express routes: each route behind its access check, each guarded
// prefix's check right before the first route below it, after each path's last route a 405 naming the
// methods the table gives that path, and the error mappers of parameters express cannot decode.
import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import { AppError } from '@fleet/shared/errors';
import { invalidParameter } from '../query-parameters';
import { accessGuard, servedHandler, type AccessCheck } from './access';
import { sendError } from './error-handler';
import type { RouteHandlers } from './route-handler';
import { GUARDED_PREFIXES, routeList, type RouteSpec } from './routes';

export interface RouteRegistration {
  handlers: RouteHandlers;
  check: AccessCheck;
  /**
   * For a path prefix, what an undecodable parameter below it is answered with, when not the 400 naming
   * the parameter that every other prefix answers (undecodableParameter).
   */
  undecodable: ReadonlyArray<{ prefix: string; handler: ErrorRequestHandler }>;
}

/** Any other method on a route names a path that exists: 405 with the methods it takes, not the 404 of an unknown path. */
function methodNotAllowed(methods: ReadonlyArray<RouteSpec['method']>): RequestHandler {
  const names = methods.map((method) => method.toUpperCase());
  const allow = names.flatMap((name) => (name === 'GET' ? ['GET', 'HEAD'] : [name])).join(', ');
  const detail = `use ${names.join(' or ')}`;
  return (req, res) => {
    res.setHeader('Allow', allow);
    sendError(res, new AppError({ kind: 'methodNotAllowed', detail: `${req.method} is not served here; ${detail}` }));
  };
}

const paramOf = (path: string) => /:(\w+)/.exec(path)?.[1];

/**
 * Express fails to decode a parameter like `%zz` before any handler runs, with a URIError that would be
 * a 500: it is a 400 naming the parameter, as any other bad value of it.
 */
function undecodableParameter(name: string): ErrorRequestHandler {
  return (error, _req, _res, next) => {
    next(error instanceof URIError ? invalidParameter(name, 'is not valid percent-encoding') : error);
  };
}

export function addRoutes(app: Express, { handlers, check, undecodable }: RouteRegistration): void {
  const routes = routeList();
  const guarded = new Set<string>();
  routes.forEach((route, index) => {
    for (const { prefix, access } of GUARDED_PREFIXES) {
      if (guarded.has(prefix) || !route.path.startsWith(`${prefix}/`)) continue;
      app.use(prefix, accessGuard(check, access));
      guarded.add(prefix);
    }
    const handler = servedHandler(route, handlers, check);
    const param = paramOf(route.path);
    app[route.method](route.path, (req, res) => handler(req, res, param === undefined ? '' : (req.params[param] as string)));
    // route().all() rather than app.all(): it answers every method without registering each one as served.
    if (!routes.slice(index + 1).some((later) => later.path === route.path)) {
      app.route(route.path).all(methodNotAllowed(routes.filter((same) => same.path === route.path).map((same) => same.method)));
    }
  });
  for (const { prefix, handler } of undecodable) app.use(prefix, handler);
  const parameters = new Map<string, string>();
  for (const { path } of routes) {
    const param = paramOf(path);
    if (param !== undefined) parameters.set(path.slice(0, path.indexOf('/:')), param);
  }
  for (const [prefix, param] of parameters) app.use(prefix, undecodableParameter(param));
}

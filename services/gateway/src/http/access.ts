// Who may call a route (routes.ts's `access`), checked the same way whichever path a request came by:
// the API key, or a bearer token granting the route's scope, left in res.locals for the handler. A guard
// on a path prefix checks first; the route's own check then finds that access granted and costs nothing.
import type { IncomingMessage } from 'node:http';
import type { ApiKeyAuth } from '../api-keys/api-key-auth';
import { checkScope, type ScopeDeps } from '../auth/require-scope';
import type { VerifiedToken } from '../auth/token-verifier';
import { invalidParameter } from '../query-parameters';
import { queryOf, type Answer, type Middleware, type RouteHandler, type RouteHandlers } from './route-handler';
import type { Access, RouteName, RouteSpec } from './routes';

export interface AccessDeps extends ScopeDeps {
  apiKeys: Pick<ApiKeyAuth, 'requireKey'>;
}

/** Refuses the request (a thrown or rejected AppError) unless it has the access; a promise only when a token is verified. */
export type AccessCheck = (access: Access, req: IncomingMessage, res: Answer) => Promise<void> | undefined;

const grantOf = (access: Access) => (access.kind === 'token' ? `token ${access.scope ?? ''}` : access.kind);

export function accessCheck(deps: AccessDeps): AccessCheck {
  return (access, req, res) => {
    if (access.kind === 'public') return undefined;
    const grant = grantOf(access);
    if (res.locals.granted === grant) return undefined;
    if (access.kind === 'apiKey') {
      deps.apiKeys.requireKey(req.headers.authorization);
      res.locals.granted = grant;
      return undefined;
    }
    const grantScope = (token: VerifiedToken) => {
      if (access.scope) checkScope(token, access.scope, deps.requiredScopes);
      res.locals.token = token;
      res.locals.granted = grant;
    };
    // A guard verified the token already: only the route's scope is left to check.
    const verified = res.locals.token as VerifiedToken | undefined;
    if (verified) {
      grantScope(verified);
      return undefined;
    }
    return deps.tokens.verify(req.headers.authorization).then(grantScope);
  };
}

/** The check as a middleware, for a guarded path prefix. */
export function accessGuard(check: AccessCheck, access: Access): Middleware {
  return (req, res, next) => {
    try {
      const checking = check(access, req, res);
      if (checking) checking.then(() => next(), next);
      else next();
    } catch (error) {
      next(error);
    }
  };
}

/** A route's handler behind its access check, for both ways a request reaches it. */
export function withAccess(handler: RouteHandler, access: Access, check: AccessCheck): RouteHandler {
  if (access.kind === 'public') return handler;
  return async (req, res, param) => {
    const checking = check(access, req, res);
    if (checking) await checking;
    await handler(req, res, param);
  };
}

/** A read's handler that first refuses any query parameter the route does not take (routes.ts's `query`). */
function takingOnly(handler: RouteHandler, names: readonly string[] | undefined): RouteHandler {
  if (names === undefined) return handler;
  const taken = new Set(names);
  return async (req, res, param) => {
    const other = Object.keys(queryOf(req)).find((name) => !taken.has(name));
    if (other !== undefined) {
      throw invalidParameter(other, `is not a parameter of this route, which takes ${names.length ? names.join(', ') : 'none'}`);
    }
    await handler(req, res, param);
  };
}

/**
 * A route's handler as both dispatchers serve it (register-routes.ts, direct-routes.ts): its access
 * checked first, then the parameters it takes; so a rule for every route is declared here once.
 */
export function servedHandler(route: RouteSpec & { name: RouteName }, handlers: RouteHandlers, check: AccessCheck): RouteHandler {
  return withAccess(takingOnly(handlers[route.name], route.query), route.access, check);
}

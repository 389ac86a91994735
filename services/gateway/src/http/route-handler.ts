// What a route is, for both ways a request reaches it: the express app and the direct routes
// (direct-routes.ts). A handler takes Node's own request and response (express's are the same objects,
// decorated) and the path's one parameter, already decoded, so it reads the same wherever it is called.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse, type ParsedUrlQuery } from 'node:querystring';
import type { RouteName } from './routes';

/** A response with the values the gateway's layers share while it is answered (express's res.locals). */
export type Answer = ServerResponse & { locals: Record<string, unknown> };

export type RouteHandler = (req: IncomingMessage, res: Answer, param: string) => Promise<void>;

/** A connect-style middleware on Node's request and response: the front steps, body-parser's parsers. */
export type Middleware = (req: IncomingMessage, res: Answer, next: (error?: unknown) => void) => void;

/** A parsed body, as body-parser leaves it on the request. */
export function bodyOf(req: IncomingMessage): unknown {
  return (req as IncomingMessage & { body?: unknown }).body;
}

/** The path of a request's URL, without its query. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The query of a request's URL, parsed as express's default ("simple") query parser does, but whole:
 * its default of 1,000 keys would drop a stream's 1,001st device unseen instead of refusing it. The
 * request head's size cap bounds the work.
 */
export function queryOf(req: IncomingMessage): ParsedUrlQuery {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return parse(query === -1 ? '' : url.slice(query + 1), '&', '=', { maxKeys: 0 });
}

/** A handler for every route of the table, by its name. */
export type RouteHandlers = Record<RouteName, RouteHandler>;

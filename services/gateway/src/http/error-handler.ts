// The one place an error becomes an HTTP response. Everything a client receives is JSON, including
// body-parser failures and unknown routes; anything unexpected is logged and answered with a bare 500.
import type { IncomingMessage } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@fleet/shared/logger';
import { AppError, type ErrorCategory } from '@fleet/shared/errors';
import { pathOf, type Answer } from './route-handler';
import { sendJson } from './send-json';
import { createUnavailableLog } from './unavailable-log';

interface BodyParserError {
  type?: string;
  status?: number;
  /** Set on errors from zlib, which body-parser passes on untyped. */
  errno?: number;
  /** What a body check run by body-parser refused the body with (refuseBody). */
  refusal?: AppError;
}

/**
 * What a body check run by body-parser's `verify` throws. body-parser passes what verify throws on with
 * the raw body set as its `body`: an AppError thrown as it is would answer with the client's body, byte
 * by byte, in place of its own fields. The refusal rides inside instead, and is answered as it is.
 */
export function refuseBody(refusal: AppError): Error {
  return Object.assign(new Error(refusal.message), { type: 'entity.verify.failed', refusal });
}

function fromBodyParser(error: BodyParserError): AppError | undefined {
  switch (error.type) {
    case 'entity.verify.failed':
      return error.refusal;
    case 'entity.parse.failed':
      return new AppError({ kind: 'malformedBody', detail: 'the body is not valid JSON' });
    case 'entity.too.large':
      return new AppError({ kind: 'payloadTooLarge' });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError({ kind: 'unsupportedMediaType', detail: 'unsupported body encoding or charset' });
    case 'parameters.too.many':
      return new AppError({ kind: 'payloadTooLarge', detail: 'too many form fields' });
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError({ kind: 'malformedBody', detail: 'the body could not be read' });
    default:
      // A body whose Content-Encoding says gzip, deflate or br but whose bytes are not fails in zlib, and
      // body-parser passes that on with a 400 but no type. It is the client's body, not a server fault.
      if (error.type === undefined && error.status === 400 && typeof error.errno === 'number') {
        return new AppError({ kind: 'malformedBody', detail: 'the body could not be decoded as its Content-Encoding says' });
      }
      return undefined;
  }
}

/** The one table from an error's category to the HTTP status it is answered with. */
const STATUS: Record<ErrorCategory, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  notFound: 404,
  methodNotAllowed: 405,
  timedOut: 408,
  conflict: 409,
  tooLarge: 413,
  unsupported: 415,
  unprocessable: 422,
  rateLimited: 429,
  headersTooLarge: 431,
  internal: 500,
  notImplemented: 501,
  unavailable: 503,
};

export function httpStatusOf(error: AppError): number {
  return STATUS[error.category];
}

/** The headers a refusal's fields become: the edge's business, not the use case's. */
export function fieldHeaders({ fields, retryAfterSeconds }: AppError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (fields.idempotencyKey !== undefined) headers['Idempotency-Key'] = fields.idempotencyKey;
  // RFC 6750 §3.1: the answer names the scope a client must ask its issuer for.
  if (fields.missingScope !== undefined) headers['WWW-Authenticate'] = `Bearer error="insufficient_scope", scope="${fields.missingScope}"`;
  if (fields.rateLimit !== undefined) {
    // draft-ietf-httpapi-ratelimit-headers-10: the policy's quota and window, and nothing left until it resets.
    const { policy, quota, windowSeconds } = fields.rateLimit;
    headers['RateLimit-Policy'] = `"${policy}";q=${quota};w=${windowSeconds}`;
    headers.RateLimit = `"${policy}";r=0;t=${retryAfterSeconds ?? windowSeconds}`;
  }
  return headers;
}

export function sendError(res: Answer, error: AppError): void {
  // Read by observe-requests.ts, which counts answers by code.
  res.locals.errorCode = error.code;
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  for (const [name, value] of Object.entries(fieldHeaders(error))) res.setHeader(name, value);
  sendJson(res, httpStatusOf(error), error);
}

export const notFound: RequestHandler = (_req, res) => {
  sendError(res, new AppError({ kind: 'routeNotFound' }));
};

/**
 * Answers an error not yet answered: the client's own fault by its status, anything else a logged 500.
 * 503s are logged as runs (unavailable-log.ts), not one line each.
 */
export function answerError(logger: Logger): (error: unknown, req: IncomingMessage, res: Answer) => void {
  const unavailable = createUnavailableLog(logger);
  return (error, req, res) => {
    const known = error instanceof AppError ? error : fromBodyParser(error as BodyParserError);
    if (known) {
      const context = { requestId: res.locals.requestId, detail: known.detail, path: pathOf(req) };
      if (known.category === 'unavailable') unavailable.answered(known.code, known.message, context);
      else if (httpStatusOf(known) >= 500) logger.warn({ code: known.code, ...context }, known.message);
      return sendError(res, known);
    }
    logger.error({ requestId: res.locals.requestId, err: error, method: req.method, path: pathOf(req) }, 'unhandled error');
    sendError(res, new AppError({ kind: 'internal' }));
  };
}

/** express's error middleware, answering through the gateway's one answerError (shared with the direct routes). */
export function errorHandler(answer: ReturnType<typeof answerError>): ErrorRequestHandler {
  // With the answer begun, express's final handler closes the connection: the client sees it cut short.
  return (error, req, res, next) => (res.headersSent ? next(error) : answer(error, req, res));
}

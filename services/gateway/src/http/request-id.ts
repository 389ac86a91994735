// Every request gets an id (the caller's X-Request-Id when it is sane), echoed in the response and
// carried in Kafka headers into the writers' logs.
import { randomUUID } from 'node:crypto';
import type { Answer, Middleware } from './route-handler';

export const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

export const assignRequestId: Middleware = (req, res, next) => {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};

export function requestIdOf(res: Answer): string {
  return res.locals.requestId as string;
}

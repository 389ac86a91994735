// What the modules describing the API share: the registry the document is built in, the components
// every operation refers to, and the type of an operation's description. Method, path, operationId and
// security are not in a description: the route table (routes.ts) gives them.
import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { RouteName } from './routes';

export type OperationDocs = Omit<RouteConfig, 'method' | 'path' | 'operationId' | 'security'>;

/** Descriptions of some of the table's routes, by route name. */
export type Operations = Partial<Record<RouteName, OperationDocs>>;

export interface DocContext {
  registry: OpenAPIRegistry;
  /** A JSON answer with this schema, carrying X-Request-Id (and Retry-After when `retry`). */
  json(schema: z.ZodType, description: string, retry?: boolean): ResponseConfig;
  errorBody: z.ZodType;
  validationError: z.ZodType;
  /** The answer to a create: the id of the stored record. */
  creationResult: z.ZodType;
  requestIdParameter: z.ZodObject;
  /** The answers every write route shares (400, 401, 403, 413, 415, 429, 503). */
  writeFailures: Record<400 | 401 | 403 | 413 | 415 | 429 | 503, ResponseConfig>;
  /** The refusals of a new live stream (MAX_STREAMS_PER_SUBJECT, MAX_STREAMS), which both stream routes share. */
  streamRefusals: Record<429 | 503, ResponseConfig>;
}

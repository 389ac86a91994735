// The OpenAPI description of what operators and integrators read: the probes, the metrics, and this
// document itself.
import type { DocContext, Operations } from './openapi-context';
import { z } from './openapi-zod';

const liveness = z.strictObject({ status: z.literal('alive') });
const dependencyState = z.enum(['up', 'down']);
const readiness = z.strictObject({
  status: z.enum(['ready', 'degraded', 'not ready']),
  checks: z.strictObject({ postgres: dependencyState, redis: dependencyState, kafka: dependencyState }),
  detail: z.string().optional().describe('Names the topics that are missing, when that is why Kafka is down'),
});

export function operationsOperations(context: DocContext): Operations {
  const { registry, json, errorBody: ErrorBody } = context;
  const Liveness = registry.register('Liveness', liveness);
  const Readiness = registry.register('Readiness', readiness);
  const operations: Operations = {};

  operations.liveness = {
    summary: 'Liveness: the process answers',
    tags: ['Operations'],
    responses: { 200: json(Liveness, 'Alive') },
  };
  operations.readiness = {
    summary:
      'Readiness: PostgreSQL and Kafka answer, the topics exist and the gateway is not stopping; without Redis it is "degraded" but ready',
    tags: ['Operations'],
    responses: { 200: json(Readiness, 'Ready'), 503: json(Readiness, 'Not ready') },
  };
  operations.metrics = {
    summary: 'Prometheus metrics',
    tags: ['Operations'],
    responses: {
      200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } },
    },
  };
  operations.openApiDocument = {
    summary: 'This document',
    tags: ['Operations'],
    responses: {
      200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.looseObject({}) } } },
    },
  };
  operations.apiDocs = {
    summary: 'This document, rendered by Swagger UI',
    tags: ['Operations'],
    responses: { 200: { description: 'An HTML page', content: { 'text/html': { schema: z.string() } } } },
  };
  operations.apiDocsAsset = {
    summary: 'A script or stylesheet of the /docs page',
    tags: ['Operations'],
    request: { params: z.object({ asset: z.string() }) },
    responses: {
      200: { description: 'The file', content: { 'text/css': { schema: z.string() }, 'application/javascript': { schema: z.string() } } },
      404: json(ErrorBody, 'No such asset (E-N1/1-02)'),
    },
  };

  return operations;
}

// The OpenAPI 3.1 description of every route the gateway serves, generated from zod schemas and from
// the route table: each route of routes.ts is an operation, its method, path, operationId and security
// taken from the table and the rest from the module describing its resource (openapi-writes.ts,
// openapi-reads.ts, openapi-devices.ts, openapi-operations.ts). The components every operation shares
// are made here, once. Served at GET /openapi.json and rendered at GET /docs.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { errorCodes } from '@fleet/shared/errors';
import { IMEI_MAX_LENGTH } from '@fleet/shared/schemas/trip-location.schema';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@fleet/shared/schemas/vehicle-group.schema';
import type { DocContext, Operations } from './openapi-context';
import { deviceOperations } from './openapi-devices';
import { operationsOperations } from './openapi-operations';
import { categoryOperations } from './openapi-categories';
import { eventOperations } from './openapi-events';
import { geofenceOperations } from './openapi-geofences';
import { positionOperations, readOperations } from './openapi-reads';
import { writeOperations } from './openapi-writes';
import { z } from './openapi-zod';
import { requestIdPattern } from './request-id';
import { openApiPath, routeList, type Access } from './routes';

const errorBody = z
  .strictObject({
    code: z.string().openapi({ description: 'E-<area><version>/<n>-<nn>, listed in the README' }),
    message: z.string(),
    detail: z.string().optional(),
  })
  .openapi({ description: 'Every error but the product category 400: a code, its message, and what went wrong' });

const validationErrorBody = errorBody
  .extend({
    issues: z.array(z.strictObject({ path: z.string(), code: z.string(), message: z.string() })),
  })
  .openapi({ description: `${errorCodes.validationFailed.code}: every invalid field (at most 100), with its path` });

const creationResult = z
  .strictObject({
    message: z.string(),
    data: z.strictObject({ id: z.number().int(), information: z.string() }),
  })
  .openapi({ description: 'The stored record (a retry of the same record answers with the same id)' });

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
const retryAfterHeader = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

function json(schema: z.ZodType, description: string, retry = false) {
  return {
    description,
    headers: retry ? { ...requestIdHeader, ...retryAfterHeader } : requestIdHeader,
    content: { 'application/json': { schema } },
  };
}

const requestIdParameter = z.object({
  'x-request-id': z
    .string()
    .regex(requestIdPattern)
    .optional()
    .openapi({ description: "Echoed back and carried to the writers' logs; one is generated when absent or unusable" }),
});

function buildDocument(): object {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'BearerJwt', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A JWT with an exp claim; a missing token is 401, an expired or malformed one 400. With JWT_REQUIRED_SCOPES=true ' +
      "each route demands the scope listed with it in the token's space-separated `scope` claim (403 E-G1/1-02 naming it). " +
      'With JWT_DEVICE_CLAIM set (e.g. imei), a token carrying that claim writes only positions whose imei equals it (403 E-G1/1-03).',
  });
  const apiKey = registry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'The raw API key, without a scheme',
  });
  registry.registerComponent('headers', 'X-Request-Id', {
    description: 'The id of this request, as logged by the gateway and the writers',
    schema: { type: 'string' },
  });
  registry.registerComponent('headers', 'Retry-After', {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer' },
  });
  registry.registerComponent('headers', 'RateLimit-Policy', {
    description:
      'The limit that refused the request, as draft-ietf-httpapi-ratelimit-headers-10 writes it: "device" counts positions ' +
      'per IMEI, "subject" requests per token subject; q is the burst let through at once and w the seconds the rate ' +
      'takes to send as many',
    schema: { type: 'string', example: '"device";q=5000;w=250' },
  });
  registry.registerComponent('headers', 'RateLimit', {
    description: 'What is left of the limit that refused the request (r) and the seconds until it is restored (t)',
    schema: { type: 'string', example: '"device";r=0;t=42' },
  });
  registry.registerComponent('headers', 'Idempotency-Key', {
    description:
      "The create's key: the client's own, or the one the gateway generated. The group may still be stored after this " +
      'answer; a retry with this key answers with that group instead of creating a second one.',
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
  });

  const CreationResult = registry.register('CreationResult', creationResult);
  const ErrorBody = registry.register('Error', errorBody);
  const ValidationError = registry.register('ValidationError', validationErrorBody);
  const badWrite = json(
    z.union([ValidationError, ErrorBody]),
    'Invalid body (E-V1/1-01, -02), or an expired or malformed token (E-V1/1-03)',
  );
  const writeFailures = {
    400: badWrite,
    401: json(ErrorBody, 'No token (E-G1/1-01)'),
    403: json(ErrorBody, "With JWT_REQUIRED_SCOPES=true, the token's scope claim lacks the route's scope (E-G1/1-02)"),
    413: json(ErrorBody, 'Body larger than BODY_LIMIT (E-V1/1-05)'),
    415: json(ErrorBody, 'Unsupported Content-Type (E-V1/1-04)'),
    429: {
      ...json(
        ErrorBody,
        'A device in the request sent more positions than its limit (E-R1/1-01), or the token subject more requests than ' +
          'its limit (E-R1/1-02); nothing is stored. Retry after Retry-After seconds',
        true,
      ),
      headers: {
        ...json(ErrorBody, '', true).headers,
        'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
        RateLimit: { $ref: '#/components/headers/RateLimit' },
      },
    },
    503: json(
      ErrorBody,
      'Kafka unavailable, no reply in time, shutting down, more request bytes being read than MAX_BUFFERED_BODY_BYTES, ' +
        'MAX_IN_FLIGHT commands already waiting for a reply, or writes waiting longer than MAX_QUEUE_AGE_MS ' +
        '(E-S1/1-01, -02, -04, -05, -06, -08); retrying is safe',
      true,
    ),
  };

  const streamRefusals = {
    429: json(
      ErrorBody,
      `This token's subject holds MAX_STREAMS_PER_SUBJECT streams on this gateway already, positions and events together (${errorCodes.subjectStreamsLimited.code})`,
      true,
    ),
    503: json(
      ErrorBody,
      `This gateway serves MAX_STREAMS streams already, positions and events together (${errorCodes.tooManyStreams.code})`,
      true,
    ),
  };

  const context: DocContext = {
    registry,
    json,
    errorBody: ErrorBody,
    validationError: ValidationError,
    creationResult: CreationResult,
    requestIdParameter,
    writeFailures,
    streamRefusals,
  };
  const categories = categoryOperations(context);
  const positions = positionOperations(context);
  const operations: Operations = {
    ...writeOperations(context),
    ...categories,
    ...positions,
    ...readOperations({ ...context, position: positions.position }),
    ...deviceOperations(context),
    ...geofenceOperations(context),
    ...eventOperations(context),
    ...operationsOperations(context),
  };
  const securityOf = (access: Access) =>
    access.kind === 'apiKey'
      ? [{ [apiKey.name]: [] }]
      : access.kind === 'token'
        ? [{ [bearer.name]: access.scope ? [access.scope] : [] }]
        : undefined;
  for (const route of routeList()) {
    const docs = operations[route.name];
    if (!docs) throw new Error(`the route ${route.name} (${route.method.toUpperCase()} ${route.path}) has no OpenAPI description`);
    const security = securityOf(route.access);
    // What every route of a kind may answer, whatever its own description says: a token route refuses a
    // token without its scope, and a route reading a body refuses one that arrives too slowly.
    const responses = { ...docs.responses };
    if (route.access.kind === 'token' && route.access.scope) {
      responses[403] ??= json(
        ErrorBody,
        `With JWT_REQUIRED_SCOPES=true, the token's scope claim lacks ${route.access.scope} (${errorCodes.scopeMissing.code})`,
      );
    }
    if (docs.request?.body) {
      responses[408] ??= json(
        ErrorBody,
        `The body arrived too slowly (${errorCodes.bodyTooSlow.code}) or not within HTTP_REQUEST_TIMEOUT_MS (${errorCodes.requestTimeout.code}); nothing of it was stored`,
      );
    }
    registry.registerPath({
      method: route.method,
      path: openApiPath(route.path),
      operationId: route.name,
      ...(security ? { security } : {}),
      ...docs,
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Fleet telemetry ingestion',
      version: '1.0.0',
      description:
        `Product category reads, trip locations and vehicle groups. Every response carries X-Request-Id; ` +
        `an unknown route is a JSON 404 (${errorCodes.routeNotFound.code}), ` +
        `another method on any route a JSON 405 (${errorCodes.methodNotAllowed.code}) with an Allow header. IMEIs are at most ${IMEI_MAX_LENGTH} characters.`,
    },
    tags: [
      { name: 'Order', description: 'Product categories (API key)' },
      { name: 'Fleet', description: 'Writes, answered once stored, and position reads (bearer JWT)' },
      { name: 'Devices', description: 'The device registry (bearer JWT) and the tracker protocols (device key)' },
      { name: 'Geofences', description: 'Areas every device is tested against, with their speed limits (bearer JWT)' },
      { name: 'Events', description: 'Events raised from the committed positions, read, streamed and sent to webhooks (bearer JWT)' },
      { name: 'Operations', description: 'Probes, metrics and this description' },
    ],
  });
}

let document: object | undefined;

/** The document, generated once per process. */
export function openApiDocument(): object {
  document ??= buildDocument();
  return document;
}

// The OpenAPI 3.1 description of every route the gateway serves, generated from zod schemas: the
// request bodies are the shared schemas the routes validate with, and the response bodies are
// defined here, once. Served at GET /openapi.json and rendered at GET /docs.
import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IMEI_MAX_LENGTH,
  VEHICLE_GROUP_NAME_MAX_LENGTH,
  VEHICLE_IDS_MAX,
  booleanTextPattern,
  errorCodes,
  imeiSchema,
  numericTextPattern,
  tripLocationRequestSchema,
  vehicleGroupRequestSchema,
} from '@fleet/shared';
import { SCOPES } from '../auth/require-scope';
import { CATEGORY_BASE_PATH } from './category-routes';
import { categoryParamsSchema } from '../categories/category.schema';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_RANGE_DAYS } from '../positions/position-query';
import { MAX_BATCH_POSITIONS } from '../trip-locations/record-trip-batch';
import { LAST_LOCATION_PATH, TRIP_LOCATIONS_PATH } from './position-routes';
import { registerDevicePaths } from './openapi-devices';
import { registerReadPaths } from './openapi-reads';
import { requestIdPattern } from './request-id';
import { NDJSON_TYPE, TRIP_LOCATION_BATCH_PATH } from './trip-batch-route';
import { FORM_FIELDS_MAX, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from './write-routes';

// zod gives a schema its methods when the schema is made, so only those made after this line have
// .openapi(); the shared ones, made before, carry their descriptions with zod's own .meta().
extendZodWithOpenApi(z);

/**
 * zod-to-openapi describes a z.preprocess() by the schema it feeds and a .pipe() by its input, so the
 * shared trip schema, generated as is, would claim that latitude is an unbounded number (the numeric
 * strings a form sends are accepted too) and would leave gpsTime untyped. Each coerced field is
 * therefore restated as what the shared preprocessor accepts on the wire, keeping the bounds of its
 * output schema; the field list and the plain fields still come from the shared schema, so a field
 * added there appears here.
 */
function wireForm(field: z.ZodType): z.ZodType {
  if (field instanceof z.ZodOptional) return wireForm(field.unwrap() as z.ZodType).optional();
  if (field instanceof z.ZodPipe && field.in instanceof z.ZodPreprocess) {
    return accepted(field.in.out as z.ZodType, field.out as z.ZodType);
  }
  if (field instanceof z.ZodPreprocess) return accepted(field.out as z.ZodType, field.out as z.ZodType);
  return field;
}

/** `coerced` is the type the preprocessor produces; `checked` carries the bounds applied after it. */
function accepted(coerced: z.ZodType, checked: z.ZodType): z.ZodType {
  if (coerced instanceof z.ZodNumber) {
    const numericText = z
      .string()
      .regex(new RegExp(numericTextPattern))
      .openapi({ description: 'a numeric string, within the same bounds' });
    return z.union([checked, numericText]);
  }
  if (coerced instanceof z.ZodBoolean) {
    return z.union([
      checked,
      z.number().int().min(0).max(1),
      z.string().regex(new RegExp(booleanTextPattern)).openapi({ description: 'true, false, 1 or 0, in any letter case' }),
    ]);
  }
  return checked;
}

const gpsTime = z
  .union([
    z.string().openapi({
      description:
        'ISO-8601 with an offset of at most ±14:00 or Z (e.g. 2026-11-22T08:30:00+07:00), "YYYY-MM-DD HH:mm:ss" in UTC, or epoch digits; ' +
        'a leap second (23:59:60 UTC) is read as the first second of the next day',
    }),
    z.number().min(0).openapi({ description: 'epoch seconds (below 1e11) or milliseconds' }),
  ])
  .openapi({
    description:
      'When the device took the position; ambiguous local times without an offset are refused, and so is a time more than ' +
      "MAX_FUTURE_SKEW (24 hours unless configured) ahead of the server's clock",
  });

const tripLocationWire = tripLocationRequestSchema
  .extend({
    ...Object.fromEntries(Object.entries(tripLocationRequestSchema.shape).map(([name, field]) => [name, wireForm(field)])),
    gpsTime,
  })
  .openapi({
    description: `A position report (spec 2.2); JSON or form-urlencoded, unknown fields are ignored (a form may hold at most ${FORM_FIELDS_MAX} fields)`,
  });

/**
 * The name's length is checked in a refinement, since zod's max() counts UTF-16 units; JSON Schema's
 * maxLength counts characters as the refinement does, so it is restated here. So are the ids, which the
 * shared schema checks one by one after their count, in a refinement too.
 */
const vehicleGroupWire = vehicleGroupRequestSchema.extend({
  vehicleGroupName: vehicleGroupRequestSchema.shape.vehicleGroupName.meta({
    maxLength: VEHICLE_GROUP_NAME_MAX_LENGTH,
    description: 'Trimmed; at least one visible character, no control or bidirectional control characters',
  }),
  vehicleIds: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).max(VEHICLE_IDS_MAX),
});

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
  .openapi({ description: 'Spec 2.4: the stored record (a retry of the same record answers with the same id)' });

const temperature = z.number().nullable().openapi({ description: 'null when the category has no limit' });

const productCategory = z
  .strictObject({ id: z.uuid(), name: z.string(), min_temperature: temperature, max_temperature: temperature })
  .openapi({ description: 'Spec 2.1' });

const categoryIdError = z
  .strictObject({
    errors: z.record(z.string(), z.array(z.string())).openapi({ description: 'field -> messages' }),
    errors_v2: z.strictObject({
      formatted: z
        .object({ _errors: z.array(z.string()) })
        .catchall(z.unknown())
        .openapi({ description: "zod's formatted error tree" }),
      issues: z.array(
        z.strictObject({
          code: z.string(),
          expected: z.unknown(),
          message: z.string(),
          path: z.array(z.string()),
          received: z.unknown(),
        }),
      ),
    }),
    message: z.string(),
  })
  .openapi({ description: 'Spec 7.1: the id is not a UUID' });

const utcTime = z.iso.datetime({ precision: 3 });
const optionalReading = <T extends z.ZodType>(schema: T) =>
  schema.nullable().openapi({ description: 'null when the device did not send it' });

const position = z
  .strictObject({
    id: z.number().int().openapi({ description: 'The trip location row, as its create answered' }),
    imei: z.string(),
    gpsTime: utcTime.openapi({ description: 'When the device took the position, in UTC with milliseconds' }),
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    speed: z.number().min(0).nullable().openapi({ description: 'km/h; null when the tracker protocol did not report it' }),
    ignition: z.boolean().nullable().openapi({ description: 'null when the tracker protocol did not report it' }),
    angle: optionalReading(z.number().min(0).max(360)),
    satellite: optionalReading(z.number().int().min(0)),
    door1: optionalReading(z.boolean()),
    door2: optionalReading(z.boolean()),
    temp: optionalReading(z.number()),
    fuel_percentage: optionalReading(z.number().min(0).max(100)),
    attributes: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'What a tracker reported beyond the columns (altitude, battery, IO elements...); null when nothing' }),
    receivedAt: utcTime.openapi({ description: 'When the gateway accepted the position' }),
  })
  .openapi({ description: 'A stored position' });

/** Any 8-4-4-4-12 hexadecimal id, as JSON Schema's uuid format takes it. */
const categoryPathParams = categoryParamsSchema.extend({ id: categoryParamsSchema.shape.id.meta({ format: 'uuid' }) });

const devicePathParams = z.object({
  imei: imeiSchema.meta({
    description: `The device; at most ${IMEI_MAX_LENGTH} printable ASCII characters`,
    example: '359632104565789',
  }),
});

const queryTime = z.string().openapi({ description: 'ISO-8601 with an offset or Z; a + must be sent as %2B' });

const historyQuery = z.object({
  from: queryTime.optional().openapi({ description: 'Inclusive; defaults to 24 hours before to', example: '2026-11-22T00:00:00Z' }),
  to: queryTime
    .optional()
    .openapi({ description: `Exclusive; defaults to now; at most ${MAX_RANGE_DAYS} days after from`, example: '2026-11-23T00:00:00Z' }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .openapi({ description: `Positions per page, default ${DEFAULT_PAGE_SIZE}`, example: DEFAULT_PAGE_SIZE }),
  cursor: z
    .string()
    .optional()
    .openapi({
      description:
        'The nextCursor of the previous page. It carries the device and the range of the first page: from and to may then ' +
        'be left out, and if given must be the same',
    }),
});

const examplePosition = {
  id: 1843,
  imei: '359632104565789',
  gpsTime: '2026-11-22T08:30:05.000Z',
  latitude: -6.2091,
  longitude: 106.8456,
  speed: 42.5,
  ignition: true,
  angle: 180,
  satellite: 9,
  door1: null,
  door2: null,
  temp: null,
  fuel_percentage: null,
  attributes: null,
  receivedAt: '2026-11-22T08:30:05.412Z',
};

const liveness = z.strictObject({ status: z.literal('alive') });
const dependencyState = z.enum(['up', 'down']);
const readiness = z.strictObject({
  status: z.enum(['ready', 'degraded', 'not ready']),
  checks: z.strictObject({ postgres: dependencyState, redis: dependencyState, kafka: dependencyState }),
  detail: z.string().optional().describe('Names the topics that are missing, when that is why Kafka is down'),
});

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

const exampleTrip = {
  imei: '359632104565789',
  gpsTime: '2026-11-22T08:30:00Z',
  latitude: -6.2088,
  longitude: 106.8456,
  speed: 42.5,
  ignition: true,
  angle: 180,
  satellite: 9,
};

const exampleBatch = [exampleTrip, { ...exampleTrip, gpsTime: '2026-11-22T08:30:05Z', latitude: -6.2091 }];

const batchStored = {
  message: 'Trip locations have been processed',
  data: {
    accepted: 2,
    rejected: 0,
    items: [
      { index: 0, id: 1842 },
      { index: 1, id: 1843 },
    ],
  },
};

const batchWithRefusal = {
  message: 'Trip locations have been processed',
  data: {
    accepted: 1,
    rejected: 1,
    items: [
      { index: 0, id: 1842 },
      {
        index: 1,
        error: {
          code: errorCodes.validationFailed.code,
          message: errorCodes.validationFailed.message,
          detail: 'latitude: Number must be less than or equal to 90',
          issues: [{ path: 'latitude', code: 'too_big', message: 'Number must be less than or equal to 90' }],
        },
      },
    ],
  },
};

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

  const TripLocationRequest = registry.register('TripLocationRequest', tripLocationWire);
  const VehicleGroupRequest = registry.register('VehicleGroupRequest', vehicleGroupWire);
  const CreationResult = registry.register('CreationResult', creationResult);
  const ErrorBody = registry.register('Error', errorBody);
  const ValidationError = registry.register('ValidationError', validationErrorBody);
  const ProductCategory = registry.register('ProductCategory', productCategory);
  const CategoryResponse = registry.register('ProductCategoryResponse', z.strictObject({ data: ProductCategory }));
  const CategoryIdError = registry.register('ProductCategoryIdError', categoryIdError);
  const Liveness = registry.register('Liveness', liveness);
  const Readiness = registry.register('Readiness', readiness);

  const badWrite = json(
    z.union([ValidationError, ErrorBody]),
    'Invalid body (E-V1/1-01, -02), or an expired or malformed token (E-V1/1-03)',
  );
  const positionWriteRefused = json(
    ErrorBody,
    "With JWT_REQUIRED_SCOPES=true, the token's scope claim lacks positions:write (E-G1/1-02); with JWT_DEVICE_CLAIM set, " +
      'the token carries that claim and a position names another imei (E-G1/1-03). Nothing is stored.',
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
        'or MAX_IN_FLIGHT commands already waiting for a reply (E-S1/1-01, -02, -04, -05, -06); retrying is safe',
      true,
    ),
  };

  registry.registerPath({
    method: 'get',
    path: `${CATEGORY_BASE_PATH}/{id}`,
    operationId: 'getProductCategory',
    summary: 'Detail product category',
    tags: ['Order'],
    security: [{ [apiKey.name]: [] }],
    request: { params: categoryPathParams, headers: requestIdParameter },
    responses: {
      200: json(CategoryResponse, 'The category'),
      400: json(CategoryIdError, 'The id is not a UUID'),
      401: json(ErrorBody, 'Missing or unknown API key (E-A1/1-01), whatever the id'),
      404: json(ErrorBody, 'No category has this id (E-N1/1-01)'),
      503: json(ErrorBody, 'PostgreSQL unavailable (E-S1/1-03)', true),
    },
  });

  registry.registerPath({
    method: 'post',
    path: TRIP_LOCATION_PATH,
    operationId: 'createTripLocation',
    summary: 'Create trip location',
    description: "Answered once the trip-writer has stored the position. Keyed by IMEI, so each device's positions stay in order.",
    tags: ['Fleet'],
    security: [{ [bearer.name]: [SCOPES.positionsWrite] }],
    request: {
      headers: requestIdParameter,
      body: {
        required: true,
        content: {
          'application/json': { schema: TripLocationRequest, example: exampleTrip },
          'application/x-www-form-urlencoded': { schema: TripLocationRequest },
        },
      },
    },
    responses: {
      200: json(CreationResult, 'Stored (or already stored: same imei and gpsTime)'),
      ...writeFailures,
      403: positionWriteRefused,
    },
  });

  const BatchResult = registry.register(
    'TripLocationBatchResult',
    z
      .strictObject({
        message: z.string(),
        data: z.strictObject({
          accepted: z.number().int().min(0).openapi({ description: 'Positions stored, or found already stored' }),
          rejected: z.number().int().min(0).openapi({ description: 'Positions refused, none of them stored' }),
          items: z
            .array(
              z.union([
                z.strictObject({ index: z.number().int().min(0), id: z.number().int() }),
                z.strictObject({ index: z.number().int().min(0), error: z.union([ValidationError, ErrorBody]) }),
              ]),
            )
            .openapi({ description: 'One per position, in request order: its row id, or why it was refused' }),
        }),
      })
      .openapi({ description: 'Every valid position is committed; the invalid ones are answered with the error a single post would get' }),
  );

  registry.registerPath({
    method: 'post',
    path: TRIP_LOCATION_BATCH_PATH,
    operationId: 'createTripLocationBatch',
    summary: 'Create trip locations in bulk',
    description:
      `1 to ${MAX_BATCH_POSITIONS} positions, each validated and stored exactly as a single post: a position already stored ` +
      '(same imei and gpsTime, by an earlier request or earlier in the same batch) answers its existing id, so a batch ' +
      `re-sent after a 503 stores nothing twice. Each device's positions keep their order. An empty batch, more than ` +
      `${MAX_BATCH_POSITIONS}, a body that is not an array, or a line of NDJSON that is not JSON is a 400 storing nothing. ` +
      "BODY_LIMIT applies to the decompressed body. Each valid position counts against its device's rate limit; a batch " +
      'taking any of its devices over its limit is refused whole (429 E-R1/1-01), storing nothing.',
    tags: ['Fleet'],
    security: [{ [bearer.name]: [SCOPES.positionsWrite] }],
    request: {
      headers: requestIdParameter.extend({
        'content-encoding': z
          .string()
          .optional()
          .openapi({ description: 'gzip to send the body compressed (deflate and br are accepted too)' }),
      }),
      body: {
        required: true,
        content: {
          'application/json': {
            schema: z.array(TripLocationRequest).min(1).max(MAX_BATCH_POSITIONS),
            example: exampleBatch,
          },
          [NDJSON_TYPE]: {
            schema: z.string().openapi({ description: 'One TripLocationRequest JSON object per line; blank lines are ignored' }),
            example: exampleBatch.map((trip) => JSON.stringify(trip)).join('\n'),
          },
        },
      },
    },
    responses: {
      200: {
        ...json(BatchResult, 'Every valid position stored (or already stored); each item says which'),
        content: {
          'application/json': {
            schema: BatchResult,
            examples: {
              stored: { summary: 'Both positions stored (or found already stored)', value: batchStored },
              refused: { summary: 'The second position had latitude 91: refused, and not stored', value: batchWithRefusal },
            },
          },
        },
      },
      ...writeFailures,
      403: positionWriteRefused,
      400: json(
        z.union([ValidationError, ErrorBody]),
        `Not an array of 1 to ${MAX_BATCH_POSITIONS} positions (E-V1/1-01), malformed JSON or NDJSON (E-V1/1-02), ` +
          'or an expired or malformed token (E-V1/1-03); nothing is stored',
      ),
      503: json(
        ErrorBody,
        'Part of the batch was not confirmed in time, Kafka is unavailable, or the batch would take the commands waiting for a ' +
          'reply past MAX_IN_FLIGHT (E-S1/1-01, -02, -04, -05, -06); re-sending the batch is safe',
        true,
      ),
    },
  });

  registry.registerPath({
    method: 'post',
    path: VEHICLE_GROUP_PATH,
    operationId: 'createVehicleGroup',
    summary: 'Create vehicle group',
    description: `A name of at most ${VEHICLE_GROUP_NAME_MAX_LENGTH} characters and at most ${VEHICLE_IDS_MAX} vehicle ids (duplicates collapsed).`,
    tags: ['Fleet'],
    security: [{ [bearer.name]: [SCOPES.groupsWrite] }],
    request: {
      headers: requestIdParameter.extend({
        'idempotency-key': z
          .string()
          .min(1)
          .max(IDEMPOTENCY_KEY_MAX_LENGTH)
          .optional()
          .openapi({
            description:
              "A retry with the same key and body answers with the group the first attempt created. Keys belong to the token's " +
              'subject (its iss and sub; a token without sub keeps its keys to itself) and are remembered for ' +
              'IDEMPOTENCY_KEY_TTL_HOURS (at least 24) from their first use, then forgotten: the key creates a new group.',
          }),
      }),
      body: {
        required: true,
        content: {
          'application/json': {
            schema: VehicleGroupRequest,
            example: { vehicleGroupName: 'Cold chain Jakarta', vehicleIds: [101, 102, 103] },
          },
        },
      },
    },
    responses: {
      200: json(CreationResult, 'Created (or the group an earlier attempt with this Idempotency-Key created)'),
      ...writeFailures,
      422: json(
        ErrorBody,
        'The Idempotency-Key already created a group from another name or other vehicle ids, within the time keys are ' +
          'remembered (E-V1/1-07); nothing is stored',
      ),
      503: {
        ...writeFailures[503],
        description:
          'Kafka unavailable, no reply in time, the database unavailable, shutting down, or more request bytes being read ' +
          'than MAX_BUFFERED_BODY_BYTES, or MAX_IN_FLIGHT commands already waiting (E-S1/1-01 to -06); ' +
          'retry with the Idempotency-Key header of this answer',
        headers: { ...writeFailures[503].headers, 'Idempotency-Key': { $ref: '#/components/headers/Idempotency-Key' } },
      },
    },
  });

  const Position = registry.register('Position', position);
  const LastLocation = registry.register('LastLocationResponse', z.strictObject({ data: Position }));
  const TripLocationPage = registry.register(
    'TripLocationPage',
    z.strictObject({
      data: z.array(Position).openapi({ description: 'Oldest first' }),
      nextCursor: z.string().nullable().openapi({ description: 'Pass as cursor for the next page; null on the last page' }),
    }),
  );
  const readFailures = {
    401: json(ErrorBody, 'No token (E-G1/1-01), whatever the imei'),
    503: json(ErrorBody, 'PostgreSQL unavailable (E-S1/1-03)', true),
  };

  registry.registerPath({
    method: 'get',
    path: LAST_LOCATION_PATH.replace(':imei', '{imei}'),
    operationId: 'getLastLocation',
    summary: "A device's last location",
    description: 'The position with the newest gpsTime stored for the device; a position arriving late never replaces a newer one.',
    tags: ['Fleet'],
    security: [{ [bearer.name]: [] }],
    request: { params: devicePathParams, headers: requestIdParameter },
    responses: {
      200: {
        ...json(LastLocation, 'The newest position'),
        content: { 'application/json': { schema: LastLocation, example: { data: examplePosition } } },
      },
      400: json(ErrorBody, 'A bad imei (E-V1/1-06, detail starts with "imei: "), or an expired or malformed token (E-V1/1-03)'),
      404: json(ErrorBody, `No position of this device has been stored (${errorCodes.positionNotFound.code})`),
      ...readFailures,
    },
  });

  registry.registerPath({
    method: 'get',
    path: TRIP_LOCATIONS_PATH.replace(':imei', '{imei}'),
    operationId: 'listTripLocations',
    summary: "A device's positions in a time range",
    description:
      `Positions with from <= gpsTime < to, oldest first, at most limit per page. Paged by keyset: follow nextCursor ` +
      `until it is null; each position is answered once.`,
    tags: ['Fleet'],
    security: [{ [bearer.name]: [] }],
    request: { params: devicePathParams, query: historyQuery, headers: requestIdParameter },
    responses: {
      200: {
        ...json(TripLocationPage, 'A page of positions'),
        content: {
          'application/json': {
            schema: TripLocationPage,
            example: { data: [{ ...examplePosition, id: 1842, gpsTime: '2026-11-22T08:30:00.000Z' }, examplePosition], nextCursor: null },
          },
        },
      },
      400: json(
        ErrorBody,
        `A bad imei, from, to, limit or cursor (${errorCodes.parameterInvalid.code}, detail starts with the parameter's name: ` +
          `not ISO-8601 with an offset, from not before to, more than ${MAX_RANGE_DAYS} days apart, limit not 1 to ${MAX_PAGE_SIZE}, ` +
          'a cursor issued for another device or range), or an expired or malformed token (E-V1/1-03)',
      ),
      ...readFailures,
    },
  });

  registerReadPaths({
    registry,
    bearerName: bearer.name,
    errorBody: ErrorBody,
    position: Position,
    json,
    requestIdParameter,
  });

  registerDevicePaths({
    registry,
    bearerName: bearer.name,
    errorBody: ErrorBody,
    validationError: ValidationError,
    json,
    requestIdParameter,
    writeFailures,
  });

  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'Liveness: the process answers',
    tags: ['Operations'],
    responses: { 200: json(Liveness, 'Alive') },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary:
      'Readiness: PostgreSQL and Kafka answer, the topics exist and the gateway is not stopping; without Redis it is "degraded" but ready',
    tags: ['Operations'],
    responses: { 200: json(Readiness, 'Ready'), 503: json(Readiness, 'Not ready') },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    tags: ['Operations'],
    responses: {
      200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    summary: 'This document',
    tags: ['Operations'],
    responses: {
      200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.looseObject({}) } } },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/docs',
    operationId: 'apiDocs',
    summary: 'This document, rendered by Swagger UI',
    tags: ['Operations'],
    responses: { 200: { description: 'An HTML page', content: { 'text/html': { schema: z.string() } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/docs/{asset}',
    operationId: 'apiDocsAsset',
    summary: 'A script or stylesheet of the /docs page',
    tags: ['Operations'],
    request: { params: z.object({ asset: z.string() }) },
    responses: {
      200: { description: 'The file', content: { 'text/css': { schema: z.string() }, 'application/javascript': { schema: z.string() } } },
      404: json(ErrorBody, 'No such asset (E-N1/1-02)'),
    },
  });

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Fleet telemetry ingestion',
      version: '1.0.0',
      description:
        `Product category reads, trip locations and vehicle groups. Every response carries X-Request-Id; ` +
        `an unknown route is a JSON 404 (${errorCodes.routeNotFound.code}), ` +
        `another method on a write or read route a JSON 405 (${errorCodes.methodNotAllowed.code}) with an Allow header. IMEIs are at most ${IMEI_MAX_LENGTH} characters.`,
    },
    tags: [
      { name: 'Order', description: 'Product categories (API key)' },
      { name: 'Fleet', description: 'Writes, answered once stored, and position reads (bearer JWT)' },
      { name: 'Devices', description: 'The device registry (bearer JWT) and the tracker protocols (device key)' },
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

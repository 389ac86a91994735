// The OpenAPI description of the writes: a trip location, a batch of them, and a vehicle group. The
// request bodies are the shared schemas the routes validate with, restated where zod-to-openapi would
// describe a coerced field by what it produces rather than by what the wire may carry.
import { errorCodes } from '@fleet/shared/errors';
import { IDEMPOTENCY_KEY_MAX_LENGTH, VEHICLE_GROUP_NAME_MAX_LENGTH, VEHICLE_IDS_MAX } from '@fleet/shared/schemas/vehicle-group.schema';
import { MAX_BATCH_POSITIONS } from '../trip-locations/record-trip-batch';
import type { DocContext, Operations } from './openapi-context';
import { z } from './openapi-zod';
import { tripLocationWire, vehicleGroupWire } from './openapi-write-bodies';
import { NDJSON_TYPE } from './trip-batch-route';

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

export function writeOperations(context: DocContext): Operations {
  const {
    registry,
    json,
    errorBody: ErrorBody,
    validationError: ValidationError,
    creationResult: CreationResult,
    requestIdParameter,
    writeFailures,
  } = context;
  const TripLocationRequest = registry.register('TripLocationRequest', tripLocationWire);
  const VehicleGroupRequest = registry.register('VehicleGroupRequest', vehicleGroupWire);
  const positionWriteRefused = json(
    ErrorBody,
    "With JWT_REQUIRED_SCOPES=true, the token's scope claim lacks positions:write (E-G1/1-02); with JWT_DEVICE_CLAIM set, " +
      'the token carries that claim and a position names another imei (E-G1/1-03). Nothing is stored.',
  );
  const operations: Operations = {};

  operations.createTripLocation = {
    summary: 'Create trip location',
    description: "Answered once the trip-writer has stored the position. Keyed by IMEI, so each device's positions stay in order.",
    tags: ['Fleet'],
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
  };

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

  operations.createTripLocationBatch = {
    summary: 'Create trip locations in bulk',
    description:
      `1 to ${MAX_BATCH_POSITIONS} positions, each validated and stored exactly as a single post: a position already stored ` +
      '(same imei and gpsTime, by an earlier request or earlier in the same batch) answers its existing id, so a batch ' +
      `re-sent after a 503 stores nothing twice. Each device's positions keep their order. An empty batch, more than ` +
      `${MAX_BATCH_POSITIONS}, a body that is not an array, or a line of NDJSON that is not JSON is a 400 storing nothing. ` +
      "BODY_LIMIT applies to the decompressed body. Each valid position counts against its device's rate limit; a batch " +
      'taking any of its devices over its limit is refused whole (429 E-R1/1-01), storing nothing.',
    tags: ['Fleet'],
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
          'reply past MAX_IN_FLIGHT, or writes wait longer than MAX_QUEUE_AGE_MS (E-S1/1-01, -02, -04, -05, -06, -08); ' +
          're-sending the batch is safe',
        true,
      ),
    },
  };

  operations.createVehicleGroup = {
    summary: 'Create vehicle group',
    description: `A name of at most ${VEHICLE_GROUP_NAME_MAX_LENGTH} characters and at most ${VEHICLE_IDS_MAX} vehicle ids (duplicates collapsed).`,
    tags: ['Fleet'],
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
          'than MAX_BUFFERED_BODY_BYTES, MAX_IN_FLIGHT commands already waiting, or writes waiting longer than ' +
          'MAX_QUEUE_AGE_MS (E-S1/1-01 to -06, -08); ' +
          'retry with the Idempotency-Key header of this answer',
        headers: { ...writeFailures[503].headers, 'Idempotency-Key': { $ref: '#/components/headers/Idempotency-Key' } },
      },
    },
  };

  return operations;
}

// The OpenAPI description of the reads: a product category, a device's positions (its last location
// and a time range), its status and the devices by status, vehicle groups read back, and the live stream.
import { errorCodes } from '@fleet/shared/errors';
import { IMEI_MAX_LENGTH, imeiSchema } from '@fleet/shared/schemas/trip-location.schema';
import { MAX_RANGE_DAYS } from '../positions/position-query';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../query-parameters';
import type { DocContext, Operations } from './openapi-context';
import { z } from './openapi-zod';
import { MAX_STREAM_DEVICES } from './stream-routes';

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
  includeFiltered: z
    .enum(['true', 'false'])
    .optional()
    .openapi({
      description:
        'true: the positions stored as filtered (not fit to use) too, each with its reason in `filtered`; ' +
        'repeat it with each page. Default false: they are left out',
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

/** The query of a keyset-paged list: a page size and the cursor of the page before. */
export const pageQuery = {
  limit: z
    .string()
    .optional()
    .meta({ description: `1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}` }),
  cursor: z.string().optional().meta({ description: 'The nextCursor of the previous page' }),
};

export function positionOperations(context: DocContext): Operations & { position: z.ZodType } {
  const { registry, json, errorBody: ErrorBody, requestIdParameter } = context;
  const operations: Operations = {};
  const Position = registry.register('Position', position);
  const LastLocation = registry.register('LastLocationResponse', z.strictObject({ data: Position }));
  const TripLocationPage = registry.register(
    'TripLocationPage',
    z.strictObject({
      data: z
        .array(
          z.union([
            Position,
            position.extend({
              filtered: z.enum(['zero', 'jump', 'accuracy', 'ahead']).openapi({ description: 'Why the position is not fit to use' }),
            }),
          ]),
        )
        .openapi({ description: 'Oldest first; with includeFiltered=true, the filtered positions too, each with its reason' }),
      nextCursor: z.string().nullable().openapi({ description: 'Pass as cursor for the next page; null on the last page' }),
    }),
  );
  const readFailures = {
    401: json(ErrorBody, 'No token (E-G1/1-01), whatever the imei'),
    503: json(ErrorBody, 'PostgreSQL unavailable (E-S1/1-03), or the connections the gateway keeps for it all busy (E-S1/1-08)', true),
  };

  operations.getLastLocation = {
    summary: "A device's last location",
    description: 'The position with the newest gpsTime stored for the device; a position arriving late never replaces a newer one.',
    tags: ['Fleet'],
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
  };

  operations.listTripLocations = {
    summary: "A device's positions in a time range",
    description:
      `Positions with from <= gpsTime < to, oldest first, at most limit per page. Paged by keyset: follow nextCursor ` +
      `until it is null; each position is answered once.`,
    tags: ['Fleet'],
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
  };

  return { ...operations, position: Position };
}

export function readOperations(context: DocContext & { position: z.ZodType }): Operations {
  const { registry, json, errorBody, streamRefusals } = context;
  const operations: Operations = {};
  const status = z.strictObject({
    imei: z.string(),
    name: z.string().nullable().optional().meta({ description: 'Present when the device is registered' }),
    lastSeenAt: z.string().nullable().meta({ description: 'When its newest position was received; null when never heard from' }),
    lastPosition: context.position.nullable(),
    status: z.enum(['online', 'offline']).meta({ description: 'offline when nothing was received for DEVICE_OFFLINE_AFTER (10m)' }),
  });
  const DeviceStatus = registry.register('DeviceStatus', status);
  const group = z.strictObject({
    id: z.number().int(),
    vehicleGroupName: z.string(),
    vehicleIds: z.array(z.number().int()).meta({ description: 'Each once, ascending' }),
    createdAt: z.string(),
  });
  const VehicleGroup = registry.register('VehicleGroup', group);
  const failures = {
    401: json(errorBody, 'No token (E-G1/1-01)'),
    503: json(errorBody, 'PostgreSQL unavailable (E-S1/1-03), or the connections the gateway keeps for it all busy (E-S1/1-08)', true),
  };

  operations.getDeviceStatus = {
    summary: "A device's status",
    tags: ['Devices'],
    request: { params: z.object({ imei: z.string() }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ message: z.string(), data: DeviceStatus }), 'The device'),
      400: json(errorBody, 'A bad imei (E-V1/1-06)'),
      403: json(errorBody, 'A token bound to another device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      404: json(errorBody, `Neither registered nor ever heard from (${errorCodes.deviceNotFound.code})`),
      ...failures,
    },
  };
  operations.listDevices = {
    summary: 'Devices, registered or seen, by status',
    description: 'Keyset-paged by IMEI: follow nextCursor until it is null; each device is answered once.',
    tags: ['Devices'],
    request: { query: z.object({ status: z.enum(['online', 'offline']).optional(), ...pageQuery }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ data: z.array(DeviceStatus), nextCursor: z.string().nullable() }), 'A page of devices'),
      400: json(errorBody, 'A bad status, limit or cursor (E-V1/1-06, detail starts with its name)'),
      403: json(errorBody, 'A token bound to one device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      ...failures,
    },
  };
  operations.getVehicleGroup = {
    summary: 'A vehicle group',
    tags: ['Fleet'],
    request: { params: z.object({ id: z.string() }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ message: z.string(), data: VehicleGroup }), 'The group'),
      400: json(errorBody, 'An id that is not a positive integer (E-V1/1-06)'),
      403: json(errorBody, 'A token lacking groups:read (E-G1/1-02)'),
      404: json(errorBody, `No group has this id (${errorCodes.groupNotFound.code})`),
      ...failures,
    },
  };
  operations.listVehicleGroups = {
    summary: 'Vehicle groups, oldest first',
    description: 'Keyset-paged by id: follow nextCursor until it is null; each group is answered once.',
    tags: ['Fleet'],
    request: { query: z.object(pageQuery), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ data: z.array(VehicleGroup), nextCursor: z.string().nullable() }), 'A page of groups'),
      400: json(errorBody, 'A bad limit or cursor (E-V1/1-06, detail starts with its name)'),
      403: json(errorBody, 'A token lacking groups:read (E-G1/1-02)'),
      ...failures,
    },
  };
  operations.streamPositions = {
    summary: 'Live positions (Server-Sent Events)',
    description:
      'text/event-stream: one `event: position` per committed position of the devices named, `data:` the position as ' +
      "last-location answers it, `id:` the stream's cursor (opaque: the last row id sent per partition of the positions topic). " +
      'With Last-Event-ID, the positions committed after that cursor and received since the stream began, within the last hour ' +
      '(late fixes of any day included, at most 10,000 a connection), come first in the order they were committed, then the ' +
      'stream goes on live: nothing is missed or sent twice however many devices it follows. A comment every 15 s keeps ' +
      'proxies from closing it; a client reading too slowly is cut off. Refusals are JSON, before the stream starts.',
    tags: ['Fleet'],
    request: {
      query: z.object({ imei: z.array(z.string()).min(1).max(MAX_STREAM_DEVICES).meta({ description: 'Repeat for each device' }) }),
      headers: z.object({
        'last-event-id': z
          .string()
          .optional()
          .meta({ description: 'The id of the last event received (a cursor; a plain row id is also read)' }),
      }),
    },
    responses: {
      200: { description: 'The stream', content: { 'text/event-stream': { schema: z.string() } } },
      400: json(errorBody, 'No imei, more than 1,000, a bad imei, or a Last-Event-ID that is not an event id (E-V1/1-06)'),
      403: json(errorBody, 'A token bound to another device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      401: json(errorBody, 'No token (E-G1/1-01)'),
      ...streamRefusals,
    },
  };

  return operations;
}

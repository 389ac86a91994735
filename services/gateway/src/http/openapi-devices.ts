// The OpenAPI description of the device routes: the registry, and the OsmAnd protocol trackers speak.
// Part of the document openapi.ts builds; the helpers it shares come in `context`.
import type { DocContext, Operations } from './openapi-context';
import { z } from './openapi-zod';
import { errorCodes } from '@fleet/shared/errors';
import { deviceRequestSchema } from '../devices/register-device';

const registration = () =>
  z.strictObject({
    message: z.string(),
    data: z.strictObject({
      imei: z.string(),
      name: z.string().nullable(),
      key: z
        .string()
        .regex(/^[A-Za-z0-9_-]{43}$/)
        .meta({ description: 'The device key, for its /osmand/{key} URL; shown only in this answer (only its hash is stored)' }),
    }),
  });

const osmandParameters = z.object({
  id: z.string().optional().meta({ description: 'The IMEI (or deviceid); must be the device the key was issued to' }),
  deviceid: z.string().optional(),
  timestamp: z.string().optional().meta({
    description:
      'Unix seconds (below 2^31), Unix milliseconds, ISO 8601 with Z or an offset, or yyyy-MM-dd HH:mm:ss as UTC; the time of receipt when absent',
  }),
  lat: z.string().optional().meta({ description: 'Latitude; or location=lat,lon' }),
  lon: z.string().optional(),
  location: z.string().optional(),
  speed: z.string().optional().meta({ description: 'In OSMAND_SPEED_UNIT (knots by default); stored in km/h. Unknown when absent' }),
  bearing: z.string().optional().meta({ description: 'Or heading: stored as angle' }),
  ignition: z.string().optional().meta({ description: 'true or false; unknown when absent' }),
});

const traccarClientLocation = z
  .object({
    location: z.object({
      timestamp: z.string().optional(),
      coords: z.object({
        latitude: z.number(),
        longitude: z.number(),
        speed: z.number().optional().meta({ description: 'm/s; negative: unknown' }),
        heading: z.number().optional().meta({ description: 'Negative: unknown' }),
        altitude: z.number().optional(),
        accuracy: z.number().optional(),
      }),
      is_moving: z.boolean().optional(),
      odometer: z.number().optional(),
      event: z.string().optional(),
      battery: z.object({ level: z.number().optional(), is_charging: z.boolean().optional() }).optional(),
      activity: z.object({ type: z.string().optional() }).optional(),
      extras: z.record(z.string(), z.unknown()).optional(),
    }),
    device_id: z.string(),
  })
  .meta({
    description: "Traccar Client's JSON (version 9 on); everything but the coordinates, time, speed and heading is kept in attributes",
  });

export function deviceOperations(context: DocContext): Operations {
  const { registry, json, errorBody, writeFailures } = context;
  const operations: Operations = {};
  const DeviceRequest = registry.register('DeviceRequest', z.object(deviceRequestSchema.shape));
  const DeviceRegistration = registry.register('DeviceRegistration', registration());

  operations.registerDevice = {
    summary: 'Register a tracker',
    description: 'Registers a device for the tracker protocols (OsmAnd, Teltonika) and issues its key, shown this once.',
    tags: ['Devices'],
    request: {
      headers: context.requestIdParameter,
      body: {
        required: true,
        content: { 'application/json': { schema: DeviceRequest, example: { imei: '356938035643809', name: 'Truck 7' } } },
      },
    },
    responses: {
      200: json(DeviceRegistration, 'Registered; the answer holds the device key'),
      ...writeFailures,
      400: json(
        context.validationError,
        'An invalid device id (1 to 32 printable ASCII characters, no spaces) or name (1 to 200 characters, no control characters) (E-V1/1-01), or a malformed body',
      ),
      409: json(errorBody, `The IMEI is registered already (${errorCodes.deviceExists.code}); nothing changed`),
    },
  };

  const osmandResponses = {
    200: { description: 'Every position is committed; the body is empty' },
    400: json(
      context.validationError,
      'A missing id, a missing or unreadable lat or lon, or a value out of range (E-V1/1-01, detail starts with the field as sent)',
    ),
    401: json(errorBody, `The key is not registered (${errorCodes.deviceKeyUnknown.code}); nothing is stored`),
    403: json(errorBody, `The request names another device than the key's (${errorCodes.deviceKeyMismatch.code}); nothing is stored`),
    ...Object.fromEntries(Object.entries(writeFailures).filter(([status]) => ['413', '415', '429', '503'].includes(status))),
  };
  const params = z.object({ key: z.string().meta({ description: 'The device key its registration answered' }) });
  const description =
    'The OsmAnd protocol of the OsmAnd app and Traccar Client: the position in the query string, or in a form or JSON body ' +
    'when the URL carries none. Answered only once committed, so a client that gets no 200 sends again; a resent fix is ' +
    'stored once. The same limits as the JSON API apply (MAX_FUTURE_SKEW, MAX_PAST_AGE, the device rate limit).';
  operations.osmandGet = {
    summary: 'A position, OsmAnd protocol (query string)',
    description,
    tags: ['Devices'],
    request: { params, query: osmandParameters },
    responses: osmandResponses,
  };
  operations.osmandPost = {
    summary: 'A position, OsmAnd protocol (query, form or JSON)',
    description,
    tags: ['Devices'],
    request: {
      params,
      query: osmandParameters,
      body: {
        required: false,
        content: {
          'application/x-www-form-urlencoded': { schema: osmandParameters },
          'application/json': { schema: z.union([traccarClientLocation, z.array(traccarClientLocation).min(1)]) },
        },
      },
    },
    responses: osmandResponses,
  };

  return operations;
}

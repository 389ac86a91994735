import type { AppError } from '@fleet/shared/errors';
import { vehicleGroupRequestSchema } from '@fleet/shared/schemas/vehicle-group.schema';
import { recordTripBatch } from './record-trip-batch';
import type { TripWriteDeps } from './create-trip-location';
import { tripRequestSchema } from '@fleet/write-path/trip-request';
import { validationError } from '@fleet/shared/schemas/validation-error';

// The 400s of the write routes are part of the API: clients match on these codes and messages, so each
// body is pinned here word for word.

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const tripRequest = tripRequestSchema({ maxFutureSkewMs: 86_400_000, maxPastAgeMs: 365 * 86_400_000 }, () => NOW);

const trip = (overrides: Record<string, unknown> = {}) => ({
  imei: '359632104565789',
  gpsTime: '2026-11-23T08:30:00Z',
  latitude: -6.2,
  longitude: 106.8,
  speed: 40,
  ignition: true,
  ...overrides,
});

const issue = (path: string, code: string, message: string) => ({ path, code, message });

/** The body's detail and issues, as the client reads them. */
function refusal(parsed: { success: true } | { success: false; error: Parameters<typeof validationError>[0] }) {
  if (parsed.success) return 'accepted';
  const { detail, issues } = validationError(parsed.error).toJSON();
  return { detail, issues };
}

const GPS_TIME_FORMATS =
  'Expected ISO-8601 with an offset (at most ±14:00) or Z, "YYYY-MM-DD HH:mm:ss" (UTC), or epoch seconds or milliseconds';
const NUMBER = 'Expected a number or a numeric string';
const BOOLEAN = 'Expected a boolean: true, false, 1 or 0';

describe('the 400 of a trip location', () => {
  test.each([
    ['a body that is not an object', 'x', [issue('', 'invalid_type', 'Expected object, received string')]],
    ['a null body', null, [issue('', 'invalid_type', 'Expected object, received null')]],
    ['an array body', [trip()], [issue('', 'invalid_type', 'Expected object, received array')]],
    [
      'an empty object',
      {},
      [
        issue('imei', 'invalid_type', 'Required'),
        issue('gpsTime', 'custom', 'Required'),
        issue('latitude', 'invalid_type', 'Required'),
        issue('longitude', 'invalid_type', 'Required'),
        issue('speed', 'invalid_type', 'Required'),
        issue('ignition', 'invalid_type', 'Required'),
      ],
    ],
    ['a latitude overflowing to Infinity', trip({ latitude: '1e999' }), [issue('latitude', 'not_finite', 'Number must be finite')]],
    [
      'a JSON latitude of 1e999 and a gpsTime two days ahead',
      trip({ latitude: Infinity, gpsTime: '2026-11-25T12:00:00Z' }),
      [
        issue('latitude', 'not_finite', 'Number must be finite'),
        issue('gpsTime', 'too_big', "Must be at most 1 day ahead of the server's clock"),
      ],
    ],
    [
      'a latitude of 91 and a gpsTime two days ahead',
      trip({ latitude: 91, gpsTime: '2026-11-25T12:00:00Z' }),
      [
        issue('latitude', 'too_big', 'Number must be less than or equal to 90'),
        issue('gpsTime', 'too_big', "Must be at most 1 day ahead of the server's clock"),
      ],
    ],
    [
      'a negative fraction of satellites',
      trip({ satellite: -1.5 }),
      [
        issue('satellite', 'invalid_type', 'Expected integer, received float'),
        issue('satellite', 'too_small', 'Number must be greater than or equal to 0'),
      ],
    ],
    [
      'satellites beyond 2^53',
      trip({ satellite: 1e20 }),
      [issue('satellite', 'too_big', 'Number must be less than or equal to 2147483647')],
    ],
    [
      'a fraction of satellites as text',
      trip({ satellite: '1.5' }),
      [issue('satellite', 'invalid_type', 'Expected integer, received float')],
    ],
    ['an ignition of "yes"', trip({ ignition: 'yes' }), [issue('ignition', 'invalid_type', BOOLEAN)]],
    ['an ignition of 2', trip({ ignition: 2 }), [issue('ignition', 'invalid_type', BOOLEAN)]],
    [
      'an imei with a space',
      trip({ imei: 'has space' }),
      [issue('imei', 'invalid_string', 'Must contain only printable ASCII characters without spaces')],
    ],
    ['an imei as a number', trip({ imei: 356938035643809 }), [issue('imei', 'invalid_type', 'Expected a string')]],
    ['an imei as an empty array', trip({ imei: [] }), [issue('imei', 'invalid_type', 'Expected a string')]],
    ['an imei as an array of 40 strings', trip({ imei: Array(40).fill('x') }), [issue('imei', 'invalid_type', 'Expected a string')]],
    [
      'an imei of 17 emoji, 34 UTF-16 units',
      trip({ imei: '\u{1F69A}'.repeat(17) }),
      [
        issue('imei', 'too_big', 'Must be at most 32 characters'),
        issue('imei', 'invalid_string', 'Must contain only printable ASCII characters without spaces'),
      ],
    ],
    ['an imei too long', trip({ imei: 'x'.repeat(33) }), [issue('imei', 'too_big', 'Must be at most 32 characters')]],
    ['an empty imei', trip({ imei: '' }), [issue('imei', 'too_small', 'Must not be empty')]],
    ['a gpsTime of words', trip({ gpsTime: 'yesterday' }), [issue('gpsTime', 'custom', GPS_TIME_FORMATS)]],
    ['a null gpsTime', trip({ gpsTime: null }), [issue('gpsTime', 'custom', GPS_TIME_FORMATS)]],
    ['a repeated form key', trip({ speed: ['1', '2'] }), [issue('speed', 'invalid_type', NUMBER)]],
    ['a null speed', trip({ speed: null }), [issue('speed', 'invalid_type', NUMBER)]],
    ['an object for a longitude', trip({ longitude: {} }), [issue('longitude', 'invalid_type', NUMBER)]],
    ['an angle of 361', trip({ angle: 361 }), [issue('angle', 'too_big', 'Number must be less than or equal to 360')]],
    [
      'a fuel percentage of 101, as text',
      trip({ fuel_percentage: '101' }),
      [issue('fuel_percentage', 'too_big', 'Number must be less than or equal to 100')],
    ],
    ['a temperature of "Infinity"', trip({ temp: 'Infinity' }), [issue('temp', 'invalid_type', NUMBER)]],
    [
      'a form of bad fields',
      {
        imei: '359632104565789',
        gpsTime: '2026-11-23 08:30:00',
        latitude: '',
        longitude: 'abc',
        speed: '-1',
        ignition: 'on',
        door1: 'TRUE',
        satellite: '-0.5',
      },
      [
        issue('latitude', 'invalid_type', NUMBER),
        issue('longitude', 'invalid_type', NUMBER),
        issue('speed', 'too_small', 'Number must be greater than or equal to 0'),
        issue('ignition', 'invalid_type', BOOLEAN),
        issue('satellite', 'invalid_type', 'Expected integer, received float'),
        issue('satellite', 'too_small', 'Number must be greater than or equal to 0'),
      ],
    ],
  ])('for %s names every bad field with its code and message', (_label, body, issues) => {
    const first = issues[0]!;
    expect(refusal(tripRequest.safeParse(body))).toEqual({ detail: `${first.path || 'body'}: ${first.message}`, issues });
  });
});

describe('the 400 of a vehicle group', () => {
  const group = (overrides: Record<string, unknown>) => ({ vehicleGroupName: 'Cold chain', vehicleIds: [1], ...overrides });

  test.each([
    ['an empty object', {}, [issue('vehicleGroupName', 'invalid_type', 'Required'), issue('vehicleIds', 'invalid_type', 'Required')]],
    ['a name that is a number', group({ vehicleGroupName: 1 }), [issue('vehicleGroupName', 'invalid_type', 'Expected a string')]],
    ['a name that is an empty array', group({ vehicleGroupName: [] }), [issue('vehicleGroupName', 'invalid_type', 'Expected a string')]],
    [
      'a name of invisible characters',
      group({ vehicleGroupName: '\u200b\u3164' }),
      [issue('vehicleGroupName', 'invalid_string', 'Must contain a visible character')],
    ],
    [
      'a name of 201 emoji',
      group({ vehicleGroupName: '\u{1F69A}'.repeat(201) }),
      [issue('vehicleGroupName', 'too_big', 'Must be at most 200 characters')],
    ],
    [
      'a name with U+0085',
      group({ vehicleGroupName: 'a\u0085b' }),
      [issue('vehicleGroupName', 'invalid_string', 'Must not contain control characters')],
    ],
    [
      'a name with a lone surrogate',
      group({ vehicleGroupName: 'a\ud800' }),
      [issue('vehicleGroupName', 'invalid_string', 'Must be valid Unicode text')],
    ],
    [
      'a name with a bidirectional override',
      group({ vehicleGroupName: 'Trucks\u202eliated' }),
      [issue('vehicleGroupName', 'invalid_string', 'Must not contain bidirectional control characters')],
    ],
    ['a blank name', group({ vehicleGroupName: '   ' }), [issue('vehicleGroupName', 'too_small', 'Must not be empty')]],
    ['ids that are text', group({ vehicleIds: 'x' }), [issue('vehicleIds', 'invalid_type', 'Expected an array of integers')]],
    [
      'a negative fraction of an id',
      group({ vehicleIds: [-1.5] }),
      [issue('vehicleIds.0', 'invalid_type', 'Expected an integer'), issue('vehicleIds.0', 'too_small', 'Must be a positive integer')],
    ],
    [
      'ids beyond 2^53, zero, text and null',
      group({ vehicleIds: [1e20, 0, '1', null] }),
      [
        issue('vehicleIds.0', 'too_big', 'Is too large'),
        issue('vehicleIds.1', 'too_small', 'Must be a positive integer'),
        issue('vehicleIds.2', 'invalid_type', 'Expected an integer'),
        issue('vehicleIds.3', 'invalid_type', 'Expected an integer'),
      ],
    ],
    [
      'JSON ids of 1e999 and -1e999',
      group({ vehicleIds: [Infinity, -Infinity] }),
      [
        issue('vehicleIds.0', 'invalid_type', 'Expected an integer'),
        issue('vehicleIds.0', 'too_big', 'Is too large'),
        issue('vehicleIds.1', 'invalid_type', 'Expected an integer'),
        issue('vehicleIds.1', 'too_small', 'Must be a positive integer'),
      ],
    ],
    [
      'ids given as a text of 10,001 characters',
      group({ vehicleIds: 'x'.repeat(10_001) }),
      [issue('vehicleIds', 'invalid_type', 'Expected an array of integers')],
    ],
    [
      '10,001 ids, the last two refused: the count first, then the ids',
      group({ vehicleIds: [...Array.from({ length: 9_999 }, (_, i) => i + 1), 0, 'x'] }),
      [
        issue('vehicleIds', 'too_big', 'Must contain at most 10000 ids'),
        issue('vehicleIds.9999', 'too_small', 'Must be a positive integer'),
        issue('vehicleIds.10000', 'invalid_type', 'Expected an integer'),
      ],
    ],
    [
      '10,001 ids',
      group({ vehicleIds: Array.from({ length: 10_001 }, (_, i) => i + 1) }),
      [issue('vehicleIds', 'too_big', 'Must contain at most 10000 ids')],
    ],
  ])('for %s names every bad field with its code and message', (_label, body, issues) => {
    const first = issues[0]!;
    expect(refusal(vehicleGroupRequestSchema.safeParse(body))).toEqual({ detail: `${first.path}: ${first.message}`, issues });
  });
});

describe('the 400 of a batch', () => {
  test.each([
    ['an object', { 0: trip() }, issue('', 'invalid_type', 'Expected an array of trip locations')],
    ['null', null, issue('', 'invalid_type', 'Expected an array of trip locations')],
    ['an empty array', [], issue('', 'too_small', 'Must hold at least 1 position')],
    ['an empty text', '', issue('', 'invalid_type', 'Expected an array of trip locations')],
    ['a text of 1,001 characters', 'x'.repeat(1001), issue('', 'invalid_type', 'Expected an array of trip locations')],
    ['1,001 positions', Array(1001).fill(trip()), issue('', 'too_big', 'Must hold at most 1000 positions')],
  ])('for %s refuses the whole body', async (_label, body, only) => {
    const refused = await recordTripBatch(body, undefined, 'request', {} as TripWriteDeps).catch((error: AppError) => error.toJSON());
    expect(refused).toMatchObject({ detail: `body: ${only.message}`, issues: [only] });
  });
});

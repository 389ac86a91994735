// Properties of the validators, checked in-process over many generated inputs: every accepted gpsTime
// format denotes exactly its instant, the parser never throws, and the trip and group schemas accept
// exactly the bodies whose every field is valid, naming each field they refuse. The same generators
// drive stored-meaning-properties.test.ts, which posts through a running stack.
import fc from 'fast-check';
import { parseGpsTime } from '@fleet/shared/schemas/gps-time';
import { tripLocationRequestSchema } from '@fleet/shared/schemas/trip-location.schema';
import { vehicleGroupRequestSchema } from '@fleet/shared/schemas/vehicle-group.schema';
import { invalidGroup, invalidTrip, jsonBody, validGroup, validTrip } from './arbitraries';
import { gpsTimeRendering, invalidGpsTime, MAX_GPS_MS } from './gps-time-arbitraries';

/** -0 and 0 mean the same position; jest's equality tells them apart. */
const sameNumberSign = (value: unknown) => (typeof value === 'number' ? value + 0 : value);

describe('gpsTime parsing', () => {
  test('every accepted format denotes exactly the instant it was written from', () => {
    fc.assert(
      fc.property(gpsTimeRendering, ({ input, ms }) => {
        expect(parseGpsTime(input)?.getTime()).toBe(ms);
      }),
      { numRuns: 3000 },
    );
  });

  test('the ISO text of a parsed time parses to the same instant', () => {
    fc.assert(
      fc.property(gpsTimeRendering, ({ input }) => {
        const parsed = parseGpsTime(input)!;
        expect(parseGpsTime(parsed.toISOString())?.getTime()).toBe(parsed.getTime());
      }),
      { numRuns: 1000 },
    );
  });

  test('known bad forms are refused', () => {
    fc.assert(
      fc.property(invalidGpsTime, (input) => {
        expect(parseGpsTime(input)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  test('any input at all is either refused or a time between 1970 and the end of 9999; nothing throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.stringMatching(/^[\d :.TZ+-]{1,30}$/), fc.double()), (input) => {
        const parsed = parseGpsTime(input);
        if (parsed !== undefined) {
          expect(parsed.getTime()).toBeGreaterThanOrEqual(0);
          expect(parsed.getTime()).toBeLessThanOrEqual(MAX_GPS_MS);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('trip-location schema', () => {
  test('a trip whose every field is valid, in any representation, is accepted with the meaning of each field', () => {
    fc.assert(
      fc.property(validTrip, (trip) => {
        const parsed = tripLocationRequestSchema.safeParse(jsonBody(trip));
        expect(parsed.success).toBe(true);
        const output = parsed.data as Record<string, unknown>;
        for (const [name, value] of Object.entries(trip.values)) expect(sameNumberSign(output[name])).toEqual(value.meaning);
        expect(Object.keys(output).sort()).toEqual(Object.keys(trip.values).sort());
      }),
      { numRuns: 1000 },
    );
  });

  test('a trip with invalid fields is refused naming exactly those fields', () => {
    fc.assert(
      fc.property(invalidTrip, (trip) => {
        const parsed = tripLocationRequestSchema.safeParse(jsonBody(trip));
        expect(parsed.success).toBe(false);
        expect([...new Set(parsed.error!.issues.map((issue) => issue.path.join('.')))].sort()).toEqual(trip.invalid);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('vehicle-group schema', () => {
  test('a valid group is accepted with its name trimmed and its ids collapsed', () => {
    fc.assert(
      fc.property(validGroup, (group) => {
        const parsed = vehicleGroupRequestSchema.safeParse(group.body);
        expect(parsed.success).toBe(true);
        expect(parsed.data!.vehicleGroupName).toBe(group.meaning!.name);
        expect([...parsed.data!.vehicleIds].sort((a, b) => a - b)).toEqual(group.meaning!.ids);
      }),
      { numRuns: 1000 },
    );
  });

  test('an invalid group is refused naming the bad field or element', () => {
    fc.assert(
      fc.property(invalidGroup, (group) => {
        const parsed = vehicleGroupRequestSchema.safeParse(group.body);
        expect(parsed.success).toBe(false);
        expect([...new Set(parsed.error!.issues.map((issue) => issue.path.join('.')))]).toEqual(group.invalid);
      }),
      { numRuns: 1000 },
    );
  });
});

import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { distanceKm, filterReasons, isNewer, type FilterSettings } from './position-filters';

const settings: FilterSettings = { maxSpeedKmh: 1000, maxAccuracyMeters: 50, maxHdop: 5, jumpConfirmations: 3, maxAheadMs: 300_000 };
const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 8, minute)).toISOString();
const trip = (overrides: Partial<TripLocationCommand>): TripLocationCommand =>
  ({ imei: 'a', gpsTime: at(0), latitude: -6.2, longitude: 106.8, speed: 10, receivedAt: at(0), ...overrides }) as TripLocationCommand;

test('the distance between two fixes is the great circle: a degree of latitude is about 111 km', () => {
  expect(distanceKm({ gpsTimeMs: 0, latitude: 0, longitude: 0 }, { gpsTimeMs: 0, latitude: 1, longitude: 0 })).toBeCloseTo(111.2, 1);
});

test('a fix is the newer only when it is later than the one known, or none is known: the same instant keeps the first', () => {
  const fix = (gpsTimeMs: number) => ({ gpsTimeMs, latitude: -6.2, longitude: 106.8 });
  expect(isNewer(fix(2), fix(1))).toBe(true);
  expect(isNewer(fix(1), undefined)).toBe(true);
  expect(isNewer(fix(1), fix(1))).toBe(false);
  expect(isNewer(fix(1), fix(2))).toBe(false);
});

test('0,0 is zero, an accuracy or hdop past its limit is accuracy, and a limit of 0 turns its rule off', () => {
  const trips = [
    trip({ latitude: 0, longitude: 0 }),
    trip({ attributes: { accuracy: 51 } }),
    trip({ attributes: { hdop: 5.1 } }),
    trip({ attributes: { accuracy: 50, hdop: 5 } }),
  ];
  expect(filterReasons(trips, new Map(), settings)).toEqual(['zero', 'accuracy', 'accuracy', null]);
  expect(
    filterReasons(trips, new Map(), { maxSpeedKmh: 0, maxAccuracyMeters: 0, maxHdop: 0, jumpConfirmations: 3, maxAheadMs: 300_000 }),
  ).toEqual(['zero', null, null, null]);
});

test("a jump is measured from the device's newest unfiltered fix, stored before or earlier in the batch, and does not replace it", () => {
  const stored = new Map([['a', { gpsTimeMs: Date.parse(at(0)), latitude: -6.2, longitude: 106.8 }]]);
  const trips = [
    trip({ gpsTime: at(1), latitude: -5.2 }), // 111 km in a minute
    trip({ gpsTime: at(2), latitude: -6.191 }), // 1 km in two minutes from the stored fix
    trip({ gpsTime: at(3), latitude: -6.182 }), // 1 km in a minute from the one before
    trip({ imei: 'b', gpsTime: at(3), latitude: 40 }), // another device, nothing known of it
  ];
  expect(filterReasons(trips, stored, settings)).toEqual(['jump', null, null, null]);
  expect(filterReasons(trips, stored, { ...settings, maxSpeedKmh: 0 })).toEqual([null, null, null, null]);
});

test('a late fix is measured against the newest one known, over the time between them', () => {
  const stored = new Map([['a', { gpsTimeMs: Date.parse(at(30)), latitude: -6.2, longitude: 106.8 }]]);
  // 30 minutes earlier and 20 km away: 40 km/h; 30 minutes earlier and 1,000 km away: 2,000 km/h.
  expect(filterReasons([trip({ gpsTime: at(0), latitude: -6.02 })], stored, settings)).toEqual([null]);
  expect(filterReasons([trip({ gpsTime: at(0), latitude: 2.8 })], stored, settings)).toEqual(['jump']);
});

describe('a wrong fix that got in first', () => {
  // Stored first, 11,000 km away; then the device reports from Jakarta every 10 s.
  const bogus = new Map([['a', { gpsTimeMs: Date.parse(at(0)), latitude: 50.1, longitude: 10.2 }]]);
  const jakarta = (k: number) =>
    trip({ gpsTime: new Date(Date.parse(at(1)) + k * 10_000).toISOString(), latitude: -6.2 + k * 0.0003, longitude: 106.8 });

  test('holds the device back for two fixes: the third of a consistent track wins, and the track goes on from it', () => {
    const track = Array.from({ length: 6 }, (_, k) => jakarta(k));
    expect(filterReasons(track, bogus, settings)).toEqual(['jump', 'jump', null, null, null, null]);
  });

  test('is overcome across batches too, from the jumps stored since it', () => {
    const stored = new Map([
      ['a', [jakarta(0), jakarta(1)].map((t) => ({ gpsTimeMs: Date.parse(t.gpsTime), latitude: t.latitude, longitude: t.longitude }))],
    ]);
    expect(filterReasons([jakarta(2), jakarta(3)], bogus, settings, stored)).toEqual([null, null]);
    expect(filterReasons([jakarta(2)], bogus, settings, new Map([['a', stored.get('a')!.slice(1)]]))).toEqual(['jump']);
  });

  test('with FILTER_JUMP_CONFIRMATIONS=0 or 1 still wins: every jump is filtered, as before', () => {
    const track = Array.from({ length: 5 }, (_, k) => jakarta(k));
    for (const jumpConfirmations of [0, 1]) {
      expect(filterReasons(track, bogus, { ...settings, jumpConfirmations })).toEqual(['jump', 'jump', 'jump', 'jump', 'jump']);
    }
  });

  test('is not overcome by jumps that disagree with each other', () => {
    const scattered = [
      trip({ gpsTime: at(1), latitude: -6.2, longitude: 106.8 }),
      trip({ gpsTime: at(2), latitude: 35.7, longitude: 139.7 }),
      trip({ gpsTime: at(3), latitude: -33.9, longitude: 151.2 }),
      trip({ gpsTime: at(4), latitude: 40.7, longitude: -74 }),
    ];
    expect(filterReasons(scattered, bogus, settings)).toEqual(['jump', 'jump', 'jump', 'jump']);
  });
});

test('a lone wrong fix in the middle of a good track is the only one filtered', () => {
  const good = new Map([['a', { gpsTimeMs: Date.parse(at(0)), latitude: -6.2, longitude: 106.8 }]]);
  const trips = [
    trip({ gpsTime: at(1), latitude: -6.199 }),
    trip({ gpsTime: at(2), latitude: 50.1, longitude: 10.2 }),
    trip({ gpsTime: at(3), latitude: -6.198 }),
    trip({ gpsTime: at(4), latitude: -6.197 }),
    trip({ gpsTime: at(5), latitude: -6.196 }),
  ];
  expect(filterReasons(trips, good, settings)).toEqual([null, 'jump', null, null, null]);
});

test('a fix dated more than FILTER_MAX_AHEAD after its receipt is ahead, and the real fix after it is measured from the one before', () => {
  const stored = new Map([['a', { gpsTimeMs: Date.parse(at(0)), latitude: -6.2, longitude: 106.8 }]]);
  const trips = [
    // Received at minute 1, dated 23 hours later.
    trip({ gpsTime: new Date(Date.parse(at(1)) + 23 * 3_600_000).toISOString(), receivedAt: at(1) }),
    // Five minutes ahead is within the tolerance.
    trip({ gpsTime: at(7), receivedAt: at(2), latitude: -6.199 }),
  ];
  expect(filterReasons(trips, stored, settings)).toEqual(['ahead', null]);
  expect(filterReasons(trips, stored, { ...settings, maxAheadMs: 0 })).toEqual([null, null]);
});

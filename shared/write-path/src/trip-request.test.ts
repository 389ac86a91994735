import { tripRequestSchema } from './trip-request';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
const schema = tripRequestSchema({ maxFutureSkewMs: DAY_MS, maxPastAgeMs: YEAR_MS }, () => NOW);

const trip = (overrides: Record<string, unknown> = {}) => ({
  imei: '359632104565789',
  gpsTime: '2026-11-23T08:30:00Z',
  latitude: -6.2,
  longitude: 106.8,
  speed: 40,
  ignition: true,
  ...overrides,
});

describe('tripRequestSchema', () => {
  it('accepts a gpsTime exactly MAX_FUTURE_SKEW ahead of the clock, and any time back to MAX_PAST_AGE', () => {
    expect(schema.safeParse(trip({ gpsTime: new Date(NOW + DAY_MS).toISOString() })).success).toBe(true);
    expect(schema.safeParse(trip({ gpsTime: new Date(NOW - YEAR_MS).toISOString() })).success).toBe(true);
    expect(schema.safeParse(trip({ gpsTime: new Date(NOW - 200 * DAY_MS).toISOString() })).success).toBe(true);
  });

  it('refuses a gpsTime a millisecond older than MAX_PAST_AGE, naming gpsTime and the age', () => {
    const parsed = schema.safeParse(trip({ gpsTime: new Date(NOW - YEAR_MS - 1).toISOString() }));
    expect(parsed.error?.issues.map(({ path, code, message }) => ({ path, code, message }))).toEqual([
      { path: ['gpsTime'], code: 'too_small', message: "Must be at most 365 days before the server's clock" },
    ]);
    expect(schema.safeParse(trip({ gpsTime: '1970-01-02T00:00:00Z' })).success).toBe(false);
  });

  it('with a retention shorter than MAX_PAST_AGE, refuses a gpsTime already past it, naming the retention', () => {
    const kept = tripRequestSchema({ maxFutureSkewMs: DAY_MS, maxPastAgeMs: YEAR_MS, retentionDays: 30 }, () => NOW);
    expect(kept.safeParse(trip({ gpsTime: new Date(NOW - 30 * DAY_MS).toISOString() })).success).toBe(true);
    const parsed = kept.safeParse(trip({ gpsTime: new Date(NOW - 30 * DAY_MS - 1).toISOString() }));
    expect(parsed.error?.issues.map(({ path, code, message }) => ({ path, code, message }))).toEqual([
      { path: ['gpsTime'], code: 'too_small', message: 'Must be within the 30-day retention of positions' },
    ]);
  });

  it('with a retention longer than MAX_PAST_AGE, MAX_PAST_AGE still bounds the past', () => {
    const kept = tripRequestSchema({ maxFutureSkewMs: DAY_MS, maxPastAgeMs: 10 * DAY_MS, retentionDays: 30 }, () => NOW);
    expect(kept.safeParse(trip({ gpsTime: new Date(NOW - 11 * DAY_MS).toISOString() })).success).toBe(false);
  });

  it('refuses a gpsTime a millisecond further ahead, naming gpsTime and the skew', () => {
    const parsed = schema.safeParse(trip({ gpsTime: NOW + DAY_MS + 1 }));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map(({ path, code, message }) => ({ path, code, message }))).toEqual([
      { path: ['gpsTime'], code: 'too_big', message: "Must be at most 1 day ahead of the server's clock" },
    ]);
  });

  it('reads the clock at each request, not once', () => {
    let now = NOW;
    const moving = tripRequestSchema({ maxFutureSkewMs: DAY_MS, maxPastAgeMs: YEAR_MS }, () => now);
    const gpsTime = new Date(NOW + 2 * DAY_MS).toISOString();
    expect(moving.safeParse(trip({ gpsTime })).success).toBe(false);
    now += DAY_MS;
    expect(moving.safeParse(trip({ gpsTime })).success).toBe(true);
  });
});

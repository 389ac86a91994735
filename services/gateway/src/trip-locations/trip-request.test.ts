import { tripRequestSchema } from './trip-request';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const DAY_MS = 86_400_000;
const schema = tripRequestSchema(DAY_MS, () => NOW);

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
  it('accepts a gpsTime exactly MAX_FUTURE_SKEW ahead of the clock, and any time before it', () => {
    expect(schema.safeParse(trip({ gpsTime: new Date(NOW + DAY_MS).toISOString() })).success).toBe(true);
    expect(schema.safeParse(trip({ gpsTime: '1990-01-01T00:00:00Z' })).success).toBe(true);
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
    const moving = tripRequestSchema(DAY_MS, () => now);
    const gpsTime = new Date(NOW + 2 * DAY_MS).toISOString();
    expect(moving.safeParse(trip({ gpsTime })).success).toBe(false);
    now += DAY_MS;
    expect(moving.safeParse(trip({ gpsTime })).success).toBe(true);
  });
});

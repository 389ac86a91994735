import { positionFromJson, positionFromParameters } from './osmand';

const receivedAt = '2026-11-26T10:00:00.000Z';

describe('the OsmAnd parameters', () => {
  test('numbers are decimal only: 0x10 and Infinity are no numbers, and 1e400 is Infinity, which the schema refuses', () => {
    const latitudeOf = (lat: string) => positionFromParameters({ id: '1', lat, lon: '2' }, 'kmh', receivedAt)?.latitude;
    expect(() => latitudeOf('0x10')).toThrow(expect.objectContaining({ detail: 'lat: Expected a number' }));
    expect(() => latitudeOf('Infinity')).toThrow(expect.objectContaining({ detail: 'lat: Expected a number' }));
    expect(latitudeOf('1e400')).toBe(Infinity);
    expect(latitudeOf(' -6.25 ')).toBe(-6.25);
    const attributes = positionFromParameters({ id: '1', lat: '1', lon: '2', io: '0x10', big: '1e400' }, 'kmh', receivedAt)?.attributes;
    expect(attributes).toEqual({ io: '0x10', big: '1e400' });
  });

  test('a report located only by cell towers or Wi-Fi is no position; without them, missing coordinates are refused', () => {
    expect(positionFromParameters({ id: '1', cell: '250,99,1234,5678' }, 'kmh', receivedAt)).toBeUndefined();
    expect(positionFromParameters({ id: '1', wifi: 'aa:bb:cc:dd:ee:ff,-60' }, 'kmh', receivedAt)).toBeUndefined();
    expect(() => positionFromParameters({ id: '1' }, 'kmh', receivedAt)).toThrow(expect.objectContaining({ detail: 'lat: Required' }));
    expect(positionFromParameters({ id: '1', lat: '1', lon: '2', cell: '250,99,1,2' }, 'kmh', receivedAt)?.attributes).toEqual({
      cell: '250,99,1,2',
    });
  });

  test.each([
    ['knots', 10, 18.52],
    ['kmh', 10, 10],
    ['mps', 10, 36],
    ['mph', 10, 16.09344],
  ] as const)('a speed in %s is stored in km/h', (unit, speed, kmh) => {
    const position = positionFromParameters({ id: '1', lat: '1', lon: '2', speed: String(speed) }, unit, receivedAt);
    expect(position?.speed).toBeCloseTo(kmh, 9);
  });

  test('Unix seconds below 2^31 and milliseconds above are both read, and a missing time is the time of receipt', () => {
    const at = (timestamp?: string) =>
      positionFromParameters({ id: '1', lat: '1', lon: '2', ...(timestamp ? { timestamp } : {}) }, 'knots', receivedAt)?.gpsTime;
    expect(at('1764151200')).toBe('2025-11-26T10:00:00.000Z');
    expect(at('1764151200123')).toBe('2025-11-26T10:00:00.123Z');
    expect(at()).toBe(receivedAt);
  });

  test('digits past any date are left for the request parser to refuse, not read as a time', () => {
    const position = positionFromParameters({ id: '1', lat: '1', lon: '2', timestamp: '99999999999999999999' }, 'knots', receivedAt);
    expect(position?.gpsTime).toBe('99999999999999999999');
  });

  test('the first of a repeated parameter counts, and every parameter the columns do not take is an attribute', () => {
    const position = positionFromParameters(
      { id: ['1', '2'], lat: '1', lon: '2', batt: '87.5', charge: 'false', wifi: 'aa:bb', valid: 'true' },
      'knots',
      receivedAt,
    );
    expect(position?.imei).toBe('1');
    expect(position?.attributes).toEqual({ batt: 87.5, charge: false, wifi: 'aa:bb', valid: true });
    expect(position?.speed).toBeUndefined();
    expect(position?.ignition).toBeUndefined();
  });
});

describe("Traccar Client's JSON", () => {
  test('a numeric device_id is read as its digits, and a battery level of -1 is left out', () => {
    const position = positionFromJson(
      { device_id: 356938035643809, location: { coords: { latitude: 1, longitude: 2 }, battery: { level: -1, is_charging: true } } },
      receivedAt,
    );
    expect(position).toMatchObject({ imei: '356938035643809', gpsTime: receivedAt, attributes: { charge: true } });
    expect(position.attributes).not.toHaveProperty('batteryLevel');
  });
});

import {
  attributesBeyondBounds,
  attributesSchema,
  MAX_ATTRIBUTE_VALUES,
  MAX_ATTRIBUTES_BYTES,
  MAX_ATTRIBUTES_DEPTH,
  tripLocationCommandSchema,
  tripLocationRequestSchema,
} from './trip-location.schema';

const valid = {
  imei: '356938035643809',
  gpsTime: '2026-11-22T08:30:00Z',
  latitude: -6.2,
  longitude: 106.8,
  speed: 40,
  ignition: true,
};

function fieldErrors(input: unknown): string[] {
  const result = tripLocationRequestSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
}

describe('tripLocationRequestSchema', () => {
  test('form strings become numbers and booleans, "false" and "0" stay false', () => {
    const parsed = tripLocationRequestSchema.parse({
      ...valid,
      latitude: '-6.25',
      longitude: ' 106.5 ',
      speed: '0',
      ignition: 'false',
      door1: '0',
      door2: 'TRUE',
      satellite: '7',
      angle: '359.5',
      temp: '-18.5',
      fuel_percentage: '100',
    });
    expect(parsed).toEqual({
      ...valid,
      gpsTime: '2026-11-22T08:30:00.000Z',
      latitude: -6.25,
      longitude: 106.5,
      speed: 0,
      ignition: false,
      door1: false,
      door2: true,
      satellite: 7,
      angle: 359.5,
      temp: -18.5,
      fuel_percentage: 100,
    });
  });

  test('unknown fields are dropped and prototype keys never reach the output', () => {
    const input = JSON.parse(
      `{"imei":"1","gpsTime":1700000000,"latitude":0,"longitude":0,"speed":0,"ignition":1,"extra":1,"__proto__":{"polluted":true}}`,
    );
    const parsed = tripLocationRequestSchema.parse(input) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['gpsTime', 'ignition', 'imei', 'latitude', 'longitude', 'speed']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test.each([
    ['latitude', { latitude: 90.0001 }],
    ['latitude', { latitude: '' }],
    ['longitude', { longitude: -180.5 }],
    ['longitude', { longitude: '0x10' }],
    ['speed', { speed: -1 }],
    ['speed', { speed: 'Infinity' }],
    ['ignition', { ignition: 'yes' }],
    ['ignition', { ignition: 2 }],
    ['imei', { imei: '' }],
    ['imei', { imei: 'x'.repeat(33) }],
    ['imei', { imei: 'has space' }],
    ['imei', { imei: 356938035643809 }],
    ['gpsTime', { gpsTime: 'not a time' }],
    ['angle', { angle: 361 }],
    ['satellite', { satellite: 3.5 }],
    ['fuel_percentage', { fuel_percentage: 101 }],
    ['door1', { door1: 'open' }],
  ])('refuses a bad %s', (field, override) => {
    expect(fieldErrors({ ...valid, ...override })).toEqual([field]);
  });

  test('names every missing required field', () => {
    expect(fieldErrors({}).sort()).toEqual(['gpsTime', 'ignition', 'imei', 'latitude', 'longitude', 'speed']);
  });

  test('a repeated form key (an array) is refused, not coerced', () => {
    expect(fieldErrors({ ...valid, latitude: ['1', '2'] })).toEqual(['latitude']);
  });

  test('its output, with a receive time, is a valid Kafka command', () => {
    const parsed = tripLocationRequestSchema.parse(valid);
    expect(tripLocationCommandSchema.safeParse({ ...parsed, receivedAt: new Date().toISOString() }).success).toBe(true);
  });
});

describe('attributesBeyondBounds', () => {
  const nested = (depth: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { leaf: 1 };
    for (let level = 1; level < depth; level += 1) value = { a: value };
    return value;
  };

  it('accepts attributes exactly at each bound', () => {
    expect(attributesBeyondBounds(nested(MAX_ATTRIBUTES_DEPTH))).toBeUndefined();
    expect(attributesBeyondBounds({ list: Array.from({ length: MAX_ATTRIBUTE_VALUES - 1 }, () => 0) })).toBeUndefined();
    expect(attributesBeyondBounds({ t: 'x'.repeat(MAX_ATTRIBUTES_BYTES - '{"t":""}'.length) })).toBeUndefined();
  });

  it('refuses one past each bound, by depth, by values in all, by bytes, and a non-finite number', () => {
    expect(attributesBeyondBounds(nested(MAX_ATTRIBUTES_DEPTH + 1))).toBe(`Must nest at most ${MAX_ATTRIBUTES_DEPTH} levels deep`);
    expect(attributesBeyondBounds({ list: Array.from({ length: MAX_ATTRIBUTE_VALUES }, () => 0) })).toMatch(/keys and list elements/);
    expect(attributesBeyondBounds({ t: 'x'.repeat(MAX_ATTRIBUTES_BYTES - '{"t":""}'.length + 1) })).toBe('Must be at most 16 KiB as JSON');
    expect(attributesBeyondBounds({ big: Infinity })).toBe('Must hold only finite numbers');
  });

  it('refuses attributes nested 100,000 deep without overflowing the stack', () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) as Record<string, unknown>;
    expect(attributesBeyondBounds(deep)).toBe(`Must nest at most ${MAX_ATTRIBUTES_DEPTH} levels deep`);
    expect(attributesSchema.safeParse(deep).error?.issues.map((issue) => issue.message)).toEqual([
      `Must nest at most ${MAX_ATTRIBUTES_DEPTH} levels deep`,
    ]);
  });
});

import { parseGpsTime } from './gps-time';

const iso = (input: unknown) => parseGpsTime(input)?.toISOString();

describe('parseGpsTime', () => {
  test.each([
    ['2026-11-22T08:30:00Z', '2026-11-22T08:30:00.000Z'],
    ['2026-11-22T08:30:00.123Z', '2026-11-22T08:30:00.123Z'],
    ['2026-11-22T08:30:00.5Z', '2026-11-22T08:30:00.500Z'],
    ['2026-11-22T15:30:00+07:00', '2026-11-22T08:30:00.000Z'],
    ['2026-11-22T03:00:00-0530', '2026-11-22T08:30:00.000Z'],
    ['2026-11-22T08:30Z', '2026-11-22T08:30:00.000Z'],
    ['2026-11-22 08:30:00', '2026-11-22T08:30:00.000Z'],
    ['2024-02-29 23:59:59', '2024-02-29T23:59:59.000Z'],
    ['2026-11-22T22:30:00+14:00', '2026-11-22T08:30:00.000Z'],
    ['2026-11-21T18:30:00-1400', '2026-11-22T08:30:00.000Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31T23:59:60.250Z', '2017-01-01T00:00:00.250Z'],
    ['2017-01-01T05:29:60+05:30', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31 23:59:60', '2017-01-01T00:00:00.000Z'],
  ])('reads the text %s as %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  test('reads epoch seconds and milliseconds, as numbers or digit strings, as the same instant', () => {
    const expected = '2026-11-22T08:30:00.000Z';
    const seconds = Date.parse(expected) / 1000;
    expect(iso(seconds)).toBe(expected);
    expect(iso(String(seconds))).toBe(expected);
    expect(iso(seconds * 1000)).toBe(expected);
    expect(iso(String(seconds * 1000))).toBe(expected);
    expect(iso(seconds + 0.25)).toBe('2026-11-22T08:30:00.250Z');
  });

  test.each([
    ['a local time without an offset', '2026-11-22T08:30:00'],
    ['31 February', '2026-02-31 10:00:00'],
    ['29 February of a common year', '2026-02-29T10:00:00Z'],
    ['hour 24', '2026-11-22T24:00:00Z'],
    ['minute 60', '2026-11-22 08:60:00'],
    ['an offset of 24 hours', '2026-11-22T08:30:00+24:00'],
    ['an offset past +14:00', '2026-11-22T08:30:00+14:01'],
    ['an offset past -14:00', '2026-11-22T08:30:00-1500'],
    ['an offset of 23:59', '2026-11-22T08:30:00-23:59'],
    ['second 60 that is not 23:59:60 UTC', '2026-11-22T08:30:60Z'],
    ['second 60 at 23:59 local time, not UTC', '2016-12-31T23:59:60+07:00'],
    ['a leap second past the year 9999', '9999-12-31T23:59:60Z'],
    ['more than millisecond precision', '2026-11-22T08:30:00.1234Z'],
    ['a date only', '2026-11-22'],
    ['words', 'yesterday'],
    ['an empty string', ''],
    ['a negative epoch', -5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a boolean', true],
    ['null', null],
    ['an object', { seconds: 1 }],
    ['an epoch beyond the year 9999', 1e15],
    ['an epoch in hexadecimal', '0x6740'],
  ])('refuses %s', (_label, input) => {
    expect(parseGpsTime(input)).toBeUndefined();
  });
});

import { types } from 'pg';
import { epochMicros, isoMillis, timestampsAsText } from './stored-time';

const pgDate = types.getTypeParser(1184, 'text') as (text: string) => Date;

// Texts as PostgreSQL 15 writes a timestamptz (DateStyle ISO) in a UTC session and in others.
const utcTexts = [
  '2026-11-22 08:30:00+00',
  '2026-11-22 08:30:00.1+00',
  '2026-11-22 08:30:00.12+00',
  '2026-11-22 08:30:00.25+00',
  '2026-11-22 08:30:00.999999+00',
  '2026-11-22 08:30:00.000123+00',
  '1970-01-01 00:00:00+00',
  '9999-12-31 23:59:59.999999+00',
];
const otherZoneTexts = [
  '2026-11-22 14:00:00.25+05:30',
  '2026-11-22 05:00:00.000123-03:30',
  '9999-12-31 15:59:59.999999-08',
  '1930-01-01 00:19:32.5+00:19:32',
  '1970-01-01 01:00:00+01',
];

describe('isoMillis', () => {
  test.each([...utcTexts, ...otherZoneTexts])('%s reads as pg would read it into a Date, then toISOString', (text) => {
    expect(isoMillis(text)).toBe(pgDate(text).toISOString());
  });

  test('drops the microseconds beyond the millisecond rather than rounding them', () => {
    expect(isoMillis('2026-11-22 08:30:00.999999+00')).toBe('2026-11-22T08:30:00.999Z');
    expect(isoMillis('2026-11-22 05:00:00.000999-03:30')).toBe('2026-11-22T08:30:00.000Z');
  });
});

describe('epochMicros', () => {
  test('keeps the microseconds, in a UTC session and in another', () => {
    expect(epochMicros('2026-11-22 08:30:00.000123+00')).toBe(BigInt(Date.parse('2026-11-22T08:30:00Z')) * 1000n + 123n);
    expect(epochMicros('2026-11-22 05:00:00.000123-03:30')).toBe(BigInt(Date.parse('2026-11-22T08:30:00Z')) * 1000n + 123n);
    expect(epochMicros('2026-11-22 14:00:00.25+05:30')).toBe(BigInt(Date.parse('2026-11-22T08:30:00.250Z')) * 1000n);
    expect(epochMicros('1970-01-01 00:00:00+00')).toBe(0n);
  });
});

describe('timestampsAsText', () => {
  test('leaves a timestamptz as its text and parses every other type as pg does', () => {
    expect(timestampsAsText.getTypeParser(1184, 'text')('2026-11-22 08:30:00+00')).toBe('2026-11-22 08:30:00+00');
    expect(timestampsAsText.getTypeParser(701, 'text')('-6.25')).toBe(-6.25);
    expect(timestampsAsText.getTypeParser(16, 'text')('t')).toBe(true);
  });
});

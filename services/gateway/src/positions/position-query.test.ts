import { encodeCursor, microsToIso, parseHistoryQuery } from './position-query';

const imei = '356938035643809';
const now = new Date('2026-11-22T12:00:00Z');

function detailOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { detail?: string }).detail;
  }
}

describe('parseHistoryQuery', () => {
  test('without parameters: the 24 hours up to now, 100 per page', () => {
    expect(parseHistoryQuery(imei, {}, now)).toEqual({
      from: new Date('2026-11-21T12:00:00Z'),
      to: now,
      limit: 100,
      includeFiltered: false,
    });
  });

  test('only to: from is 24 hours before it; only from: to is now', () => {
    expect(parseHistoryQuery(imei, { to: '2026-11-20T00:00:00+07:00' }, now).from).toEqual(new Date('2026-11-18T17:00:00Z'));
    expect(parseHistoryQuery(imei, { from: '2026-11-22T11:00:00Z' }, now).to).toEqual(now);
  });

  test('a cursor brings its range and the position after which the page starts', () => {
    const cursor = encodeCursor({
      imei,
      fromMs: Date.parse('2026-11-20T00:00:00Z'),
      toMs: Date.parse('2026-11-21T00:00:00Z'),
      afterMicros: 1795132800000001n,
    });
    expect(parseHistoryQuery(imei, { cursor, limit: '5' }, now)).toEqual({
      from: new Date('2026-11-20T00:00:00Z'),
      to: new Date('2026-11-21T00:00:00Z'),
      limit: 5,
      afterMicros: 1795132800000001n,
      includeFiltered: false,
    });
  });

  test('includeFiltered=true asks for the filtered positions too; false or nothing leaves them out', () => {
    expect(parseHistoryQuery(imei, { includeFiltered: 'true' }, now).includeFiltered).toBe(true);
    expect(parseHistoryQuery(imei, { includeFiltered: 'false' }, now).includeFiltered).toBe(false);
    expect(() => parseHistoryQuery(imei, { includeFiltered: '1' }, now)).toThrow(
      expect.objectContaining({ detail: 'includeFiltered: must be true or false' }),
    );
  });

  test.each([
    ['cursor', { cursor: encodeCursor({ imei, fromMs: 0, toMs: 1e16, afterMicros: 1n }) }],
    ['cursor', { cursor: encodeCursor({ imei: 'other', fromMs: 0, toMs: 1000, afterMicros: 1n }) }],
    ['cursor', { cursor: 'x'.repeat(300) }],
    ['limit', { limit: '99999999' }],
    ['from', { from: ['2026-11-22T00:00:00Z', '2026-11-22T01:00:00Z'] }],
  ])('refuses a bad %s', (parameter, query) => {
    expect(detailOf(() => parseHistoryQuery(imei, query, now))).toMatch(new RegExp(`^${parameter}: `));
  });
});

describe('microsToIso', () => {
  test('keeps the microseconds a JS Date drops', () => {
    expect(microsToIso(1795300000123456n)).toBe('2026-11-21T22:26:40.123456Z');
    expect(microsToIso(0n)).toBe('1970-01-01T00:00:00.000000Z');
  });
});

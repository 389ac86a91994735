import { decodeCursor, encodeCursor, newCursor, sentUpTo } from './stream-cursor';

const WINDOW_START = 1_700_000_000_000;

describe('stream cursors', () => {
  it('read back what they wrote: the time the stream began, its floor and the last id sent per partition', () => {
    const cursor = newCursor(1_764_270_000_123);
    cursor.lastIds.set(11, 987_654_321);
    cursor.lastIds.set(0, 42);
    const text = encodeCursor(cursor);
    expect(text).toBe(`c1.${(1_764_270_000_123).toString(36)}.0.0-16_b-${(987_654_321).toString(36)}`);
    expect(decodeCursor(text, WINDOW_START)).toEqual(cursor);
  });

  it('count a partition without an entry as sent up to the floor', () => {
    const cursor = decodeCursor('c1.1.9.3-a', WINDOW_START)!;
    expect(sentUpTo(cursor, 3)).toBe(10);
    expect(sentUpTo(cursor, 4)).toBe(9);
  });

  it('take a plain row id, as streams sent before cursors, as the floor of every partition within the window', () => {
    expect(decodeCursor(' 1234 ', WINDOW_START)).toEqual({ since: WINDOW_START, lastIds: new Map(), floor: 1234 });
  });

  it.each([
    [''],
    ['c2.1.0.'],
    ['c1.1.0'],
    ['c1.1.0.3-'],
    ['c1.1.0.3-4-5'],
    ['c1.1.0.3-4_3-5'],
    ['c1.1.0.A-4'],
    ['c1.zzzzzzzzzzzzz.0.'],
    ['c1.1.0.zz-1'],
    ['12345678901234567890'],
    ['-1'],
  ])('refuse %j', (text) => {
    expect(decodeCursor(text, WINDOW_START)).toBeUndefined();
  });
});

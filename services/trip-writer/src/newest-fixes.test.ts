import { NewestFixes } from './newest-fixes';

const fix = (gpsTimeMs: number, latitude = -6.2) => ({ gpsTimeMs, latitude, longitude: 106.8 });

test('a newer fix replaces the one remembered, an older or equal one does not', () => {
  const fixes = new NewestFixes();
  fixes.remember(new Map([['a', fix(2000)]]), fixes.mark());
  fixes.remember(new Map([['a', fix(1000, -7)]]), fixes.mark());
  fixes.remember(new Map([['a', fix(2000, -8)]]), fixes.mark());
  expect(fixes.of(['a', 'b'])).toEqual(new Map([['a', fix(2000)]]));
  fixes.remember(new Map([['a', fix(3000, -9)]]), fixes.mark());
  expect(fixes.of(['a'])).toEqual(new Map([['a', fix(3000, -9)]]));
});

test('what a batch read or stored before everything was forgotten is not remembered after', () => {
  const fixes = new NewestFixes();
  const mark = fixes.mark();
  fixes.forgetAll();
  fixes.remember(new Map([['a', fix(1000)]]), mark);
  expect(fixes.of(['a']).size).toBe(0);
  fixes.remember(new Map([['a', fix(1000)]]), fixes.mark());
  expect(fixes.of(['a']).size).toBe(1);
});

test('past its capacity the device written least lately is forgotten first, and forget drops the devices named', () => {
  const fixes = new NewestFixes(2);
  fixes.remember(new Map([['a', fix(1000)]]), fixes.mark());
  fixes.remember(new Map([['b', fix(1000)]]), fixes.mark());
  fixes.remember(new Map([['a', fix(2000)]]), fixes.mark());
  fixes.remember(new Map([['c', fix(1000)]]), fixes.mark());
  expect([...fixes.of(['a', 'b', 'c']).keys()]).toEqual(['a', 'c']);
  fixes.forget(['a']);
  expect([...fixes.of(['a', 'b', 'c']).keys()]).toEqual(['c']);
});

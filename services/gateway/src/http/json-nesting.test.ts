import { asUtf8, nestsDeeperThan } from './json-nesting';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('nestsDeeperThan', () => {
  test('counts arrays and objects together, up to the limit and one past it', () => {
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(nestsDeeperThan(bytes(nested(32)), 32)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(33)), 32)).toBe(true);
  });

  test('siblings do not add up: depth, not the number of values', () => {
    expect(nestsDeeperThan(bytes(`[${Array(1000).fill('{"a":[1]}').join(',')}]`), 3)).toBe(false);
  });

  test('brackets inside strings, escaped quotes among them, are not counted', () => {
    expect(nestsDeeperThan(bytes(`["${'[{'.repeat(50)}"]`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`["\\"${'['.repeat(50)}", "\\\\"]`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`["\\\\", [[1]]]`), 2)).toBe(true);
  });

  test('NDJSON starts each line afresh; JSON text does not', () => {
    const text = bytes(`${'['.repeat(20)}\n${nested(20)}\n`);
    expect(nestsDeeperThan(text, 32, true)).toBe(false);
    expect(nestsDeeperThan(text, 32, false)).toBe(true);
    expect(nestsDeeperThan(bytes(`"open\n${nested(3)}`), 2, true)).toBe(true);
  });
});

describe('asUtf8', () => {
  test('keeps UTF-8 as it is and decodes UTF-16 as the parser will', () => {
    const utf8 = bytes('["孛"]');
    expect(asUtf8(utf8, 'utf-8')).toBe(utf8);
    // In UTF-16LE ∀ is the bytes 00 22, a quote that ends the string to a reader of bytes, and 孛 the
    // bytes 5B 5B, two brackets; once decoded, both are characters of a string.
    const utf16 = Buffer.from('["∀孛孛孛"]', 'utf16le');
    expect(nestsDeeperThan(utf16, 2)).toBe(true);
    expect(nestsDeeperThan(asUtf8(utf16, 'utf-16le'), 2)).toBe(false);
  });
});

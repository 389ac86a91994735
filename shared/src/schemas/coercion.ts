// Form bodies carry every field as a string, and devices are inconsistent even in JSON. These
// preprocessors accept a number or a strictly numeric string, and a boolean or one of four boolean
// words; anything else is left as it is so that zod reports a type error naming the field.
import { z } from 'zod';
import { typeError } from './issue-wording';

const numericText = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** The number a decimal text writes ("12.5", "-1e3"; "1e400" is Infinity), or NaN for any other text ("0x10", "", "Infinity"). */
export function decimalNumber(text: string): number {
  return numericText.test(text.trim()) ? Number(text.trim()) : NaN;
}

function toNumber(value: unknown, ctx: z.core.$RefinementCtx): unknown {
  const number = typeof value === 'string' && numericText.test(value.trim()) ? Number(value.trim()) : value;
  // "1e999", as text or as a JSON number, is Infinity: refused as the API always has, as zod 3's
  // not_finite, which left the other fields' checks to run (zod 4's number type would call it no
  // number at all, and stop them).
  if (number === Infinity || number === -Infinity) {
    ctx.addIssue({ code: 'custom', message: 'Number must be finite', params: { code: 'not_finite' }, continue: true });
  }
  return number;
}

const booleanWords: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

/** The strings numberLike() accepts, as a JSON Schema pattern for the API description. */
export const numericTextPattern = `^\\s*(?:${numericText.source.slice(1, -1)})\\s*$`;

/** The strings booleanLike() accepts (in any letter case), as a JSON Schema pattern, which has no `i` flag. */
export const booleanTextPattern = `^\\s*(?:${Object.keys(booleanWords)
  .map((word) => [...word].map((char) => (/[a-z]/.test(char) ? `[${char}${char.toUpperCase()}]` : char)).join(''))
  .join('|')})\\s*$`;

function toBoolean(value: unknown): unknown {
  if (typeof value === 'string') {
    const word = booleanWords[value.trim().toLowerCase()];
    return word ?? value;
  }
  if (value === 1) return true;
  if (value === 0) return false;
  return value;
}

/** A finite number, given as a number or a numeric string ("12.5", not "0x10" or "Infinity"). */
export const numberLike = () => z.preprocess(toNumber, z.number({ error: typeError('Expected a number or a numeric string') }));

/** A boolean, given as true/false, 1/0 or the strings "true", "false", "1", "0". */
export const booleanLike = () => z.preprocess(toBoolean, z.boolean({ error: typeError('Expected a boolean: true, false, 1 or 0') }));

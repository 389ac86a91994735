// How a refused value is reported: with the codes and words the API has always answered with, which
// clients match on ("invalid_string", "Expected number, received string", "Number must be greater than
// or equal to -90"), those of zod 3, on which it was built. zod 4 names and words its issues otherwise
// ("invalid_format", "Invalid input: expected number, received string"). Loading this module installs
// issueMessage as zod's error map, for every schema in the process; bodies name an issue's code with
// issueCode. Both run only for a refused value, never on the path of a valid one. Only the issues the
// project's schemas raise are worded; any other keeps zod's words.
import { z } from 'zod';

type RawIssue = z.core.$ZodRawIssue;

/** zod 3's name for the type of a value, as its type issues gave it in `received`. */
export function receivedType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isNaN(value)) return 'nan';
  return typeof value;
}

/** An infinite number where a number is expected, which zod 4's number type refuses and zod 3's took. */
function isInfiniteNumber(issue: RawIssue): boolean {
  return issue.code === 'invalid_type' && issue.expected === 'number' && (issue.input === Infinity || issue.input === -Infinity);
}

/** zod 3's name for a string format (its `validation`): the lax UUIDs a category id may be are zod 4's guid. */
export function formatName(format: string): string {
  return format === 'guid' ? 'uuid' : format;
}

/**
 * A schema's message for a value of the wrong type, as zod 3's `invalid_type_error`: not for an absent
 * value, which is "Required", nor for an infinite number, which zod 3 took as a number (its checks
 * then refused it).
 */
export function typeError(message: string): z.core.$ZodErrorMap {
  return (issue) => (issue.code === 'invalid_type' && issue.input !== undefined && !isInfiniteNumber(issue) ? message : undefined);
}

/** "Number must be ...", "String must contain ... character(s)", "Array must contain ... element(s)". */
function sizeMessage(origin: string, bound: string, limit: number | bigint): string | undefined {
  if (origin === 'number') return `Number must be ${bound} ${limit}`;
  if (origin === 'string') return `String must contain ${bound} ${limit} character(s)`;
  if (origin === 'array') return `Array must contain ${bound} ${limit} element(s)`;
  return undefined;
}

const quoted = (values: readonly unknown[]) =>
  values.map((value) => (typeof value === 'string' ? `'${value}'` : String(value))).join(' | ');

function enumMessage(values: readonly unknown[], input: unknown): string {
  if (input === undefined) return 'Required';
  if (typeof input !== 'string') return `Expected ${quoted(values)}, received ${receivedType(input)}`;
  return `Invalid enum value. Expected ${quoted(values)}, received '${input}'`;
}

/**
 * An enum's message for a value outside `values`, listing them in the order given: zod 4 keeps an
 * enum's values as the keys of an object, which puts numeric ones ('1', '0') first.
 */
export function enumError(values: readonly string[]): z.core.$ZodErrorMap {
  return (issue) => (issue.code === 'invalid_value' ? enumMessage(values, issue.input) : undefined);
}

/** zod 3's message for an issue; undefined leaves zod's own. */
export function issueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'Required';
      if (isInfiniteNumber(issue)) return 'Number must be finite';
      if (issue.expected === 'int') return 'Expected integer, received float';
      return `Expected ${issue.expected}, received ${receivedType(issue.input)}`;
    case 'too_small':
      if (issue.origin === 'number')
        return sizeMessage('number', issue.inclusive ? 'greater than or equal to' : 'greater than', issue.minimum);
      return sizeMessage(issue.origin, issue.inclusive ? 'at least' : issue.origin === 'string' ? 'over' : 'more than', issue.minimum);
    case 'too_big':
      if (issue.origin === 'number') return sizeMessage('number', issue.inclusive ? 'less than or equal to' : 'less than', issue.maximum);
      return sizeMessage(issue.origin, issue.inclusive ? 'at most' : issue.origin === 'string' ? 'under' : 'less than', issue.maximum);
    case 'invalid_format':
      return issue.format === 'regex' ? 'Invalid' : `Invalid ${formatName(issue.format)}`;
    case 'invalid_value':
      return enumMessage(issue.values, issue.input);
    case 'invalid_union':
      return issue.discriminator === undefined
        ? undefined
        : `Invalid discriminator value. Expected ${quoted(Array.isArray(issue.options) ? issue.options : [])}`;
    default:
      return undefined;
  }
}

/**
 * zod 3's code for an issue, as bodies carry it. A custom issue standing for a check zod 4 no longer has
 * names its code in `params.code` (numberLike's not_finite).
 */
export function issueCode(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_format') return 'invalid_string';
  if (issue.code === 'custom' && typeof issue.params?.code === 'string') return issue.params.code;
  return issue.code;
}

z.config({ customError: issueMessage });

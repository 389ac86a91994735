// Checks with the rules the API and the configuration were built on (zod 3's), where zod 4's own
// differ in what they refuse or in the issues they report:
// - zod 4's int() refuses a whole number beyond 2^53 (a satellite count of 1e20 would be "not an
//   integer" as well as "too large", DATABASE_POOL_SIZE=1e20 no number at all), and stops at a fraction
//   (a satellite count of -1.5 would no longer also be reported as negative);
// - zod 4's min() and max() of a length also measure a value the type refused, when it has a length
//   (an array given for a name, a text for a list of ids), reporting issues zod 3 did not.
import { z } from 'zod';

/** Any whole number, however large. */
export function integer(): z.core.$ZodCheck<number> {
  const check = z.check<number>((payload) => {
    if (!Number.isInteger(payload.value))
      payload.issues.push({ code: 'invalid_type', expected: 'int', input: payload.value, continue: true });
  });
  // Marks the number an integer as int() does, so that descriptions generated from the schema (the
  // OpenAPI document) say integer.
  check._zod.onattach.push((schema) => {
    schema._zod.bag.format = 'safeint';
  });
  return check;
}

/** Whether nothing so far refused the value: zod 3 ran a schema's checks only then. */
const notRefused = ({ issues }: z.core.ParsePayload) => issues.every((issue) => issue.continue === true);

const errorOf = (message: string | undefined) => (message === undefined ? {} : { error: () => message });

/** At least `minimum` characters of a text, or elements of a list. */
export function minLength(minimum: number, message?: string): z.core.$ZodCheckMinLength {
  return new z.core.$ZodCheckMinLength({ check: 'min_length', minimum, when: notRefused, ...errorOf(message) });
}

/** At most `maximum` characters of a text, or elements of a list. */
export function maxLength(maximum: number, message?: string): z.core.$ZodCheckMaxLength {
  return new z.core.$ZodCheckMaxLength({ check: 'max_length', maximum, when: notRefused, ...errorOf(message) });
}

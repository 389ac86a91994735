// The shapes of a product category: the id a client asks for, the row an import brings in, and the
// object the read answers with (the interface fixes its fields and their order). Temperatures are plain numbers or null.
import { z } from 'zod';
import { minLength } from '@fleet/shared/schemas/checks';
import { typeError } from '@fleet/shared/schemas/issue-wording';

// Any 8-4-4-4-12 hexadecimal id, whatever its version and variant bits: zod's guid, as lax as the uuid()
// of zod 3 the API was built on (zod 4's uuid() holds to RFC 9562).
export const categoryParamsSchema = z.object({ id: z.guid() });

const decimal = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** An import cell: a number, a decimal written as text (CSV), or empty/absent for "no limit". */
const temperature = z.preprocess(
  (value) => {
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') return value;
    const text = value.trim();
    if (text === '') return null;
    return decimal.test(text) ? Number(text) : value;
  },
  z.number({ error: typeError('must be a number or empty') }).nullable(),
);

export const categoryRowSchema = z
  .object({
    // Lower case, as PostgreSQL prints uuids, so the cache key of an imported id is the one reads use.
    id: z
      .string()
      .trim()
      .check(z.guid())
      .transform((id) => id.toLowerCase()),
    name: z.string().trim().check(minLength(1, 'must not be empty')),
    min_temperature: temperature,
    max_temperature: temperature,
  })
  .refine((row) => row.min_temperature === null || row.max_temperature === null || row.min_temperature <= row.max_temperature, {
    message: 'must not be above max_temperature',
    path: ['min_temperature'],
  });

export type Category = z.output<typeof categoryRowSchema>;

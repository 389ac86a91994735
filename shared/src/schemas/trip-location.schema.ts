// The trip-location message: what a device posts (JSON or form), and what travels on Kafka to the
// trip-writer. Both sides import these schemas, so the gateway never publishes what the writer refuses.
import { z } from 'zod';
import { integer, maxLength, minLength } from './checks';
import { booleanLike, numberLike } from './coercion';
import { parseGpsTime } from './gps-time';
import { typeError } from './issue-wording';

export const IMEI_MAX_LENGTH = 32;

/** A device id as every route takes it, in a body or in a path. */
export const imeiSchema = z
  .string({ error: typeError('Expected a string') })
  .check(minLength(1, 'Must not be empty'), maxLength(IMEI_MAX_LENGTH, `Must be at most ${IMEI_MAX_LENGTH} characters`))
  .regex(/^[\x21-\x7e]*$/, 'Must contain only printable ASCII characters without spaces');

export const MAX_ATTRIBUTES = 256;
/** How deep objects and lists may nest inside attributes: a tracker's extras are flat or nearly so. */
export const MAX_ATTRIBUTES_DEPTH = 8;
/** Keys and list elements of attributes at every depth together. */
export const MAX_ATTRIBUTE_VALUES = 1024;
/** The attributes as JSON, in UTF-8 bytes. */
export const MAX_ATTRIBUTES_BYTES = 16 * 1024;

/** PostgreSQL stores no NUL in text or JSONB: a value holding one would fail the writer's insert. */
const NUL_REFUSED = 'Must not hold a NUL character (\\u0000) in a key or a string';

/**
 * Why attributes are too large to keep, or hold what cannot be stored (a NUL), or undefined when they fit. Walked with a stack, never recursion:
 * a value nested twenty thousand deep must be refused here, before anything serialises it (JSON.stringify
 * would overflow the call stack), and it must stop at the first bound passed rather than read it all.
 */
export function attributesBeyondBounds(attributes: Record<string, unknown>): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: attributes, depth: 1 }];
  let values = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'number' && !Number.isFinite(value)) return 'Must hold only finite numbers';
      if (typeof value === 'string' && value.includes('\u0000')) return NUL_REFUSED;
      continue;
    }
    if (depth > MAX_ATTRIBUTES_DEPTH) return `Must nest at most ${MAX_ATTRIBUTES_DEPTH} levels deep`;
    if (!Array.isArray(value) && Object.keys(value).some((key) => key.includes('\u0000'))) return NUL_REFUSED;
    const children = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
    values += children.length;
    if (values > MAX_ATTRIBUTE_VALUES) return `Must hold at most ${MAX_ATTRIBUTE_VALUES} keys and list elements in all`;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  if (Buffer.byteLength(JSON.stringify(attributes)) > MAX_ATTRIBUTES_BYTES) {
    return `Must be at most ${MAX_ATTRIBUTES_BYTES / 1024} KiB as JSON`;
  }
  return undefined;
}

/**
 * What a tracker reports beyond the columns (altitude, accuracy, battery, IO elements...), kept whole as
 * a JSON object: at most MAX_ATTRIBUTES keys, each of at most 64 characters, bounded in depth, values
 * and bytes (attributesBeyondBounds). The values arrive parsed from JSON (a body, a Kafka message) or
 * made by a protocol's decoder, so they are JSON already.
 */
export const attributesSchema = z
  .record(z.string().check(maxLength(64, 'Must be at most 64 characters')), z.unknown(), {
    error: typeError('Expected an object'),
  })
  .refine((attributes) => Object.keys(attributes).length <= MAX_ATTRIBUTES, `Must hold at most ${MAX_ATTRIBUTES} attributes`)
  .superRefine((attributes, ctx) => {
    const beyond = attributesBeyondBounds(attributes);
    if (beyond !== undefined) ctx.addIssue({ code: 'custom', message: beyond });
  })
  .meta({
    description: `What the device reported beyond the columns: at most ${MAX_ATTRIBUTES} keys of up to 64 characters, nested at most ${MAX_ATTRIBUTES_DEPTH} deep, ${MAX_ATTRIBUTE_VALUES} keys and list elements in all, ${MAX_ATTRIBUTES_BYTES / 1024} KiB as JSON, finite numbers only`,
  });

export type Attributes = z.infer<typeof attributesSchema>;

/** The HTTP request body, before normalisation. Unknown fields are dropped. */
export const tripLocationRequestSchema = z.object({
  imei: imeiSchema,
  gpsTime: z
    .unknown()
    .refine((value) => value !== undefined, 'Required')
    .transform((value, ctx) => {
      const date = parseGpsTime(value);
      if (!date) {
        ctx.addIssue({
          code: 'custom',
          message: 'Expected ISO-8601 with an offset (at most ±14:00) or Z, "YYYY-MM-DD HH:mm:ss" (UTC), or epoch seconds or milliseconds',
        });
        return z.NEVER;
      }
      return date.toISOString();
    }),
  latitude: numberLike().pipe(z.number().min(-90).max(90)),
  longitude: numberLike().pipe(z.number().min(-180).max(180)),
  speed: numberLike().pipe(z.number().min(0)),
  ignition: booleanLike(),
  angle: numberLike().pipe(z.number().min(0).max(360)).optional(),
  satellite: numberLike().pipe(z.number().check(integer()).min(0).max(2_147_483_647)).optional(),
  door1: booleanLike().optional(),
  door2: booleanLike().optional(),
  temp: numberLike().optional(),
  fuel_percentage: numberLike().pipe(z.number().min(0).max(100)).optional(),
  attributes: attributesSchema.optional(),
});

/**
 * A position as a tracker protocol reports it (OsmAnd, Teltonika), already mapped to the request's
 * fields: the same checks, but a protocol may not report the speed or the ignition, which then stay
 * unknown rather than invented.
 */
export const trackerPositionSchema = tripLocationRequestSchema.extend({
  speed: tripLocationRequestSchema.shape.speed.optional(),
  ignition: tripLocationRequestSchema.shape.ignition.optional(),
});

/** The Kafka command: normalised, every value already of its final type. */
export const tripLocationCommandSchema = z.object({
  imei: imeiSchema,
  gpsTime: z.iso.datetime({ offset: false, precision: 3 }),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  /** Speed and ignition are absent when the device's protocol did not report them (unknown); the JSON
   * and form API require both. */
  speed: z.number().min(0).optional(),
  ignition: z.boolean().optional(),
  angle: z.number().min(0).max(360).optional(),
  satellite: z.number().check(integer()).min(0).max(2_147_483_647).optional(),
  door1: z.boolean().optional(),
  door2: z.boolean().optional(),
  temp: z.number().optional(),
  fuel_percentage: z.number().min(0).max(100).optional(),
  attributes: attributesSchema.optional(),
  /** When the gateway accepted the request. */
  receivedAt: z.iso.datetime({ offset: false, precision: 3 }),
});

export type TripLocationCommand = z.infer<typeof tripLocationCommandSchema>;

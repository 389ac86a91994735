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
});

/** The Kafka command: normalised, every value already of its final type. */
export const tripLocationCommandSchema = z.object({
  imei: imeiSchema,
  gpsTime: z.iso.datetime({ offset: false, precision: 3 }),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  speed: z.number().min(0),
  ignition: z.boolean(),
  angle: z.number().min(0).max(360).optional(),
  satellite: z.number().check(integer()).min(0).max(2_147_483_647).optional(),
  door1: z.boolean().optional(),
  door2: z.boolean().optional(),
  temp: z.number().optional(),
  fuel_percentage: z.number().min(0).max(100).optional(),
  /** When the gateway accepted the request. */
  receivedAt: z.iso.datetime({ offset: false, precision: 3 }),
});

export type TripLocationCommand = z.infer<typeof tripLocationCommandSchema>;

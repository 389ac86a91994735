// The write path's environment, read by every process that takes positions from outside (the gateway
// and the Teltonika listener), so that both refuse and limit alike.
import { z } from 'zod';
import { duration, kafkaLingerMs, nonNegativeInt, positiveInt, redisUrl } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';

/** Shared with the categories CLI, which must evict the keys the gateway writes. */
export const cacheKeyPrefix = z.string().default('fleet:');

/**
 * The write path's settings, read by every process that takes positions from outside: the gateway and
 * the Teltonika listener. One definition, so that both refuse and limit alike.
 */
export const writePathEnv = {
  REDIS_URL: redisUrl,
  CACHE_KEY_PREFIX: cacheKeyPrefix,
  REPLY_TIMEOUT_MS: positiveInt(10_000),
  PUBLISH_TIMEOUT_MS: positiveInt(2000),
  KAFKA_LINGER_MS: kafkaLingerMs,
  // Commands this gateway has published and waits on a writer's reply for (a batch counts each of its
  // positions). Beyond it a write is answered 503 at once: a request that would only wait out
  // REPLY_TIMEOUT_MS behind a stalled writer costs memory and helps nobody.
  MAX_IN_FLIGHT: positiveInt(10_000),
  // Admission by queue age: once a write has waited longer than this for its confirmation and none has
  // been confirmed within it for a second, new writes are answered 503 E-S1/1-08 at once, before the wait
  // reaches REPLY_TIMEOUT_MS or a client's own timeout. 0 turns it off.
  MAX_QUEUE_AGE_MS: nonNegativeInt(3000),
  // Rate limits, shared by every gateway through Redis; a rate of 0 turns a limit off. The burst is the
  // most let through at once before the rate applies (rate-limits/write-limits.ts). A device reporting
  // every second sends 60 positions a minute, and one back in coverage uploads its buffer in batches
  // of up to 1,000: a burst of 5,000, then 1,200 a minute, drains a week-old buffer of 10-second
  // positions in under an hour.
  RATE_LIMIT_DEVICE_PER_MINUTE: nonNegativeInt(1200),
  RATE_LIMIT_DEVICE_BURST: nonNegativeInt(5000),
  // Per token subject, in requests: a fleet app or an aggregator may post for many devices.
  RATE_LIMIT_SUBJECT_PER_SECOND: nonNegativeInt(1000),
  RATE_LIMIT_SUBJECT_BURST: nonNegativeInt(2000),
  // How long a rate-limit check waits for Redis before the write is let through unchecked. Longer than
  // a cache lookup's REDIS_COMMAND_TIMEOUT_MS: a busy gateway can take a healthy Redis's answer past
  // 50 ms, and letting writes through is no fallback under the very load the limits are for.
  RATE_LIMIT_REDIS_TIMEOUT_MS: positiveInt(500),
  /**
   * How far ahead of the server's clock a gpsTime may be before it is refused with 400: a duration such
   * as 24h, 90m or 2d, or a number of milliseconds. Becomes milliseconds.
   */
  MAX_FUTURE_SKEW: duration('24h'),
  /** How old a gpsTime may be before it is refused with 400, in the same notation. Becomes milliseconds. */
  MAX_PAST_AGE: duration('365d'),
  /**
   * The trip-writer's retention (days of positions kept): a position already past it is refused with
   * 400 rather than stored in a partition about to be dropped. Unset (or empty): everything is kept.
   */
  TRIP_RETENTION_DAYS: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().check(integer()).positive().optional(),
  ),
};

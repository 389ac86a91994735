// The gateway's environment, parsed once at start.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import bytes from 'bytes';
import ms from 'ms';
import { z } from 'zod';
import {
  booleanFlag,
  commonEnv,
  kafkaLingerMs,
  loadConfig,
  nonNegativeInt,
  optionalString,
  positiveInt,
  redisUrl,
} from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';

/** Shared with the categories CLI, which must evict the keys the gateway writes. */
export const cacheKeyPrefix = z.string().default('fleet:');

/** A duration in ms's notation (24h, 90m, 2d) or plain milliseconds; undefined for anything else or a negative one. */
function durationMs(value: string): number | undefined {
  try {
    const parsed = ms(value as ms.StringValue) as number | undefined;
    return parsed !== undefined && Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A duration variable (see durationMs), as milliseconds. */
function duration(fallback: string) {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .default(fallback)
      .transform((value, ctx) => {
        const parsed = durationMs(value);
        if (parsed === undefined) {
          // Not final, so that the checks across variables below still run and report theirs too.
          ctx.addIssue({
            code: 'custom',
            message: 'must be a duration such as 24h, 90m or 2d, or a number of milliseconds',
            continue: true,
          });
          return z.NEVER;
        }
        return parsed;
      }),
  );
}

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

const gatewayEnv = z
  .object({
    ...commonEnv,
    ...writePathEnv,
    NODE_ENV: z.string().default('development'),
    PORT: z.coerce.number().check(integer()).min(0).max(65535).default(8080),
    REDIS_COMMAND_TIMEOUT_MS: positiveInt(50),
    CATEGORY_CACHE_TTL_SECONDS: positiveInt(300),
    CATEGORY_NOT_FOUND_TTL_SECONDS: positiveInt(30),
    API_KEYS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((key) => key.trim())
          .filter(Boolean),
      ),
    API_KEY_REFRESH_SECONDS: positiveInt(10),
    JWT_SECRET: optionalString,
    JWT_PUBLIC_KEY: optionalString,
    // Any URL the URL parser reads, as given (zod's z.url() is stricter, and trims).
    JWKS_URL: optionalString.pipe(
      z
        .string()
        .refine((value) => URL.canParse(value), 'Invalid url')
        .optional(),
    ),
    JWT_ISSUER: optionalString,
    JWT_AUDIENCE: optionalString,
    /** Unset: a token may live as long as its issuer says. */
    JWT_MAX_LIFETIME_SECONDS: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.coerce.number().check(integer()).positive().optional(),
    ),
    JWT_CACHE_SIZE: positiveInt(10_000),
    /**
     * A claim (e.g. `imei`) that restricts a token carrying it to the positions of that one device. Unset:
     * no token is restricted by a claim.
     */
    JWT_DEVICE_CLAIM: optionalString,
    /** Each route demands its scope (positions:write, positions:read, groups:write, groups:read, devices:write) in the token's `scope` claim. */
    JWT_REQUIRED_SCOPES: booleanFlag(false),
    BODY_LIMIT: z
      .string()
      .default('1mb')
      .refine((value) => bytes.parse(value) !== null, 'must be a size such as 1mb or 512kb'),
    // Request bytes buffered at once across all requests; beyond it a write is answered 503. A buffered
    // byte costs about three in memory (the bytes, their text, the parsed value): at 32 MiB, with V8's
    // heap capped as deployed, the gateway stays under 200 MiB resident however many large bodies
    // arrive together.
    MAX_BUFFERED_BODY_BYTES: positiveInt(32 * 1024 * 1024),
    // A body still arriving after BODY_RATE_GRACE_MS at under BODY_MIN_BYTES_PER_SECOND on average is cut
    // with 408: the slowest mobile link sends a position's few hundred bytes in well under a second.
    BODY_MIN_BYTES_PER_SECOND: positiveInt(1024),
    BODY_RATE_GRACE_MS: positiveInt(5000),
    // Slow clients: the whole request head must arrive within HTTP_HEADERS_TIMEOUT_MS and the whole
    // request within HTTP_REQUEST_TIMEOUT_MS (Node answers 408 and closes the socket), so a client
    // sending a byte a second holds a connection for seconds, not forever. An idle keep-alive
    // connection is kept longer than a load balancer keeps its own (60 s on AWS ALB and GCP), so the
    // balancer, never the gateway, closes it and no request is sent on a socket being closed.
    HTTP_HEADERS_TIMEOUT_MS: positiveInt(10_000),
    HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt(65_000),
    /** Live position streams one gateway serves at once; beyond them a new stream is answered 503. */
    MAX_STREAMS: positiveInt(10_000),
    /** A device with nothing received for this long is offline (GET /fleet/api/v1/devices...), same notation. */
    DEVICE_OFFLINE_AFTER: duration('10m'),
    /** The unit of `speed` in the OsmAnd protocol's parameters: knots as the OsmAnd app sends it, by default. */
    OSMAND_SPEED_UNIT: z.enum(['knots', 'kmh', 'mps', 'mph']).default('knots'),
    GATEWAY_INSTANCE_ID: optionalString,
    TRUST_PROXY: booleanFlag(false),
  })
  .superRefine((env, ctx) => {
    const keys = [env.JWT_SECRET, env.JWT_PUBLIC_KEY, env.JWKS_URL].filter(Boolean).length;
    if (keys > 1) {
      ctx.addIssue({ code: 'custom', path: ['JWT_SECRET'], message: 'set only one of JWT_SECRET, JWT_PUBLIC_KEY, JWKS_URL' });
    }
    if (keys === 0 && env.NODE_ENV === 'production') {
      ctx.addIssue({
        code: 'custom',
        path: ['JWT_SECRET'],
        message: 'one of JWT_SECRET, JWT_PUBLIC_KEY, JWKS_URL is required in production',
      });
    }
    if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['HTTP_HEADERS_TIMEOUT_MS'], message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS' });
    }
    if (env.JWT_SECRET && Buffer.byteLength(env.JWT_SECRET) < 32) {
      ctx.addIssue({ code: 'custom', path: ['JWT_SECRET'], message: 'must be at least 32 bytes for HS256' });
    }
  });

export type GatewayEnv = z.output<typeof gatewayEnv>;

/** Every variable the gateway reads, so that the deployment files can be checked against it. */
export const gatewayEnvNames = Object.keys(gatewayEnv.shape);

export interface GatewayConfig extends GatewayEnv {
  instanceId: string;
  /** True when no key was configured and a throwaway development secret was generated. */
  jwtSecretGenerated: boolean;
}

export function gatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const parsed = loadConfig(gatewayEnv, env);
  const generate = !parsed.JWT_SECRET && !parsed.JWT_PUBLIC_KEY && !parsed.JWKS_URL;
  return {
    ...parsed,
    JWT_SECRET: generate ? randomBytes(32).toString('base64url') : parsed.JWT_SECRET,
    jwtSecretGenerated: generate,
    instanceId: parsed.GATEWAY_INSTANCE_ID ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
  };
}

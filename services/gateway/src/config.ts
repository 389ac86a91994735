// The gateway's environment, parsed once at start.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import bytes from 'bytes';
import { z } from 'zod';
import { booleanFlag, commonEnv, duration, loadConfig, nonNegativeInt, optionalString, positiveInt } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { writePathEnv } from '@fleet/write-path/write-path-config';

const gatewayEnv = z
  .object({
    ...commonEnv,
    ...writePathEnv,
    NODE_ENV: z.string().default('development'),
    PORT: z.coerce.number().check(integer()).min(0).max(65535).default(8080),
    /**
     * Connections for the fleet apps' routes (positions, devices and their registration, groups,
     * geofences, events, webhooks), apart from DATABASE_POOL_SIZE's, which serve category reads, API keys
     * and the key lookups of devices' own writes: a flood of one kind cannot keep the other waiting.
     */
    DATABASE_FLEET_APP_POOL_SIZE: positiveInt(10),
    /**
     * What the fleet's geofences may add up to: every event processor holds them all in memory and tests
     * each fix against them. A polygon of 1,000 positions is some 70 KB of a processor's heap.
     */
    GEOFENCES_MAX: positiveInt(10_000),
    GEOFENCES_MAX_POSITIONS: positiveInt(500_000),
    /** Each event is stored and sent once for every webhook that wants it. */
    WEBHOOKS_MAX: positiveInt(100),
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
    /** Live streams, of positions and of events together, one gateway serves at once; beyond them a new stream is answered 503. */
    MAX_STREAMS: positiveInt(10_000),
    /**
     * Of those, the streams a token subject may hold open on one gateway; beyond them a new one is answered
     * 429. 0: no limit but MAX_STREAMS, the default, since one fleet app's backend may serve all its users'
     * streams under one subject.
     */
    MAX_STREAMS_PER_SUBJECT: nonNegativeInt(0),
    /** A device with nothing received for this long is offline (GET /fleet/api/v1/devices...), same notation. */
    DEVICE_OFFLINE_AFTER: duration('10m'),
    /** Lets a webhook point at a loopback, link-local or private address (a test's receiver, a private network). */
    WEBHOOK_ALLOW_PRIVATE: booleanFlag(false),
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

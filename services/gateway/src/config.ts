// The gateway's environment, parsed once at start.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import bytes from 'bytes';
import { z } from 'zod';
import { booleanFlag, commonEnv, kafkaLingerMs, loadConfig, optionalString, positiveInt, redisUrl } from '@fleet/shared';

/** Shared with the categories CLI, which must evict the keys the gateway writes. */
export const cacheKeyPrefix = z.string().default('fleet:');

const gatewayEnv = z
  .object({
    ...commonEnv,
    NODE_ENV: z.string().default('development'),
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    REDIS_URL: redisUrl,
    REDIS_COMMAND_TIMEOUT_MS: positiveInt(50),
    CACHE_KEY_PREFIX: cacheKeyPrefix,
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
    JWKS_URL: optionalString.pipe(z.string().url().optional()),
    JWT_ISSUER: optionalString,
    JWT_AUDIENCE: optionalString,
    /** Unset: a token may live as long as its issuer says. */
    JWT_MAX_LIFETIME_SECONDS: z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().positive().optional()),
    JWT_CACHE_SIZE: positiveInt(10_000),
    /**
     * A claim (e.g. `imei`) that restricts a token carrying it to the positions of that one device. Unset:
     * no token is restricted by a claim.
     */
    JWT_DEVICE_CLAIM: optionalString,
    /** Each route demands its scope (positions:write, groups:write, positions:read) in the token's `scope` claim. */
    JWT_REQUIRED_SCOPES: booleanFlag(false),
    REPLY_TIMEOUT_MS: positiveInt(10_000),
    PUBLISH_TIMEOUT_MS: positiveInt(2000),
    KAFKA_LINGER_MS: kafkaLingerMs,
    BODY_LIMIT: z
      .string()
      .default('1mb')
      .refine((value) => bytes.parse(value) !== null, 'must be a size such as 1mb or 512kb'),
    // Request bytes buffered at once across all requests; beyond it a write is answered 503. A buffered
    // byte costs about three in memory (the bytes, their text, the parsed value): at 32 MiB the gateway
    // stays under 200 MiB resident however many large bodies arrive together.
    MAX_BUFFERED_BODY_BYTES: positiveInt(32 * 1024 * 1024),
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
    if (env.JWT_SECRET && Buffer.byteLength(env.JWT_SECRET) < 32) {
      ctx.addIssue({ code: 'custom', path: ['JWT_SECRET'], message: 'must be at least 32 bytes for HS256' });
    }
  });

export type GatewayEnv = z.output<typeof gatewayEnv>;

/** Every variable the gateway reads, so that the deployment files can be checked against it. */
export const gatewayEnvNames = Object.keys(gatewayEnv.innerType().shape);

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

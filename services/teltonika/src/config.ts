// The Teltonika listener's environment: the write path's settings it shares with the gateway (limits,
// timeouts, Redis for the rate limits), and its own TCP settings.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';
import { commonEnv, loadConfig, optionalString, positiveInt } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { writePathEnv } from '@fleet/write-path/write-path-config';

const port = (fallback: number) => z.coerce.number().check(integer()).min(0).max(65535).default(fallback);

const teltonikaEnv = z.object({
  ...commonEnv,
  ...writePathEnv,
  /** The TCP port devices connect to; 0 turns the listener off. */
  TELTONIKA_PORT: port(5027),
  /** GET /metrics, /readyz and /healthz. */
  METRICS_PORT: port(9465),
  /** Connections served at once; a device beyond them is refused at connect and tries again later. */
  TELTONIKA_MAX_CONNECTIONS: positiveInt(10_000),
  /**
   * A connection that sends nothing for this long is closed: a device keeps its link open between
   * records and sends at least every few minutes; a half-open one (its network gone) only ends here or
   * at TCP keep-alive.
   */
  TELTONIKA_IDLE_TIMEOUT_MS: positiveInt(600_000),
  /** How long a new connection has to send its IMEI. */
  TELTONIKA_HANDSHAKE_TIMEOUT_MS: positiveInt(30_000),
  TELTONIKA_INSTANCE_ID: optionalString,
});

export type TeltonikaEnv = z.output<typeof teltonikaEnv>;

/** Every variable the listener reads, so that the deployment files can be checked against it. */
export const teltonikaEnvNames = Object.keys(teltonikaEnv.shape);

export interface TeltonikaConfig extends TeltonikaEnv {
  instanceId: string;
}

export function teltonikaConfig(env: NodeJS.ProcessEnv = process.env): TeltonikaConfig {
  const parsed = loadConfig(teltonikaEnv, env);
  return {
    ...parsed,
    instanceId: parsed.TELTONIKA_INSTANCE_ID ?? `teltonika-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
  };
}

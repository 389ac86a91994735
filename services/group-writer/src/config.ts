// The group-writer's environment: what every writer reads, and how long an Idempotency-Key is remembered.
import { z } from 'zod';
import { loadConfig } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { writerEnv } from '@fleet/shared/writer-service';

/** The shortest time a key is remembered, as the API documents it: a client retrying for a day is safe. */
export const IDEMPOTENCY_KEY_MIN_TTL_HOURS = 24;

const groupWriterEnv = writerEnv.extend({
  /**
   * How long an Idempotency-Key is remembered, counted from the create that first used it. Until then a
   * retry answers the group the key created; afterwards the key is forgotten and creates a new group.
   */
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number()
    .check(integer())
    .min(IDEMPOTENCY_KEY_MIN_TTL_HOURS)
    .max(24 * 365)
    .default(IDEMPOTENCY_KEY_MIN_TTL_HOURS),
});

export type GroupWriterConfig = z.output<typeof groupWriterEnv>;

/** Every variable the group-writer reads, so that the deployment files can be checked against it. */
export const groupWriterEnvNames = Object.keys(groupWriterEnv.shape);

export function groupWriterConfig(env: NodeJS.ProcessEnv = process.env): GroupWriterConfig {
  return loadConfig(groupWriterEnv, env);
}

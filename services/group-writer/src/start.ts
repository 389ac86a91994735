// The group-writer: consumes vehicle-group commands (consume.ts), stores each group with its members
// (group-store.ts), and forgets the Idempotency-Keys older than IDEMPOTENCY_KEY_TTL_HOURS.
import { startChore } from '@fleet/shared/chore';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { startWriter, type RunningWriter } from '@fleet/shared/writer-service';
import type { GroupWriterConfig } from './config';
import { consumeVehicleGroups } from './consume';
import { forgetExpiredKeys } from './group-store';

export { groupWriterConfig, groupWriterEnvNames, type GroupWriterConfig } from './config';

/**
 * How often expired keys are cleared. Their expiry never waits for it (a lookup ignores an expired key at
 * once); the purge only keeps forgotten keys from lingering in the table.
 */
export const KEY_PURGE_INTERVAL_MS = 15 * 60_000;

export function start(config: GroupWriterConfig, logger: Logger = createLogger('group-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  const keys = { ttlHours: config.IDEMPOTENCY_KEY_TTL_HOURS };
  return startWriter(
    {
      name: 'group-writer',
      topic: (topics) => topics.vehicleGroups,
      consume: (pool) => consumeVehicleGroups(pool, keys),
      upkeep: async ({ pool }) =>
        startChore(
          {
            name: 'forgetting expired Idempotency-Keys',
            everyMs: KEY_PURGE_INTERVAL_MS,
            run: async () => {
              const forgotten = await forgetExpiredKeys(pool, keys);
              if (forgotten > 0) logger.info({ forgotten }, 'forgot expired Idempotency-Keys');
            },
          },
          logger,
        ),
    },
    config,
    logger,
  );
}

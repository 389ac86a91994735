// The scheduled upkeep of trip_locations' partitions, at start and every interval: creates the partitions
// of today and the days ahead, and drops those whose whole day is older than the retention (DROP TABLE,
// never DELETE); and forgets the late positions noted for the live streams' replay once past its window. Several writer replicas run it; a PostgreSQL advisory lock lets one of them do it at a
// time, the others skipping that run.
import type { Pool } from 'pg';
import { withClient } from '@fleet/shared/db/transaction';
import type { Logger } from '@fleet/shared/logger';
import type { WriterUpkeep } from '@fleet/shared/writer-service';
import type { PartitionGuard } from './partition-guard';
import type { PartitionMetrics } from './partition-metrics';
import { addDays, createPartition, dayOf, dropPartition, partitionDays, startOfDay, type Day } from './trip-partitions';

/** The advisory lock of the maintenance; any constant no other code of the database uses. */
const MAINTENANCE_LOCK = 7_146_210_401;
const DAY_MS = 86_400_000;

export interface MaintenanceSettings {
  aheadDays: number;
  /** Undefined keeps everything. */
  retentionDays: number | undefined;
  intervalMs: number;
}

export interface MaintenanceDeps {
  pool: Pool;
  guard: PartitionGuard;
  metrics: PartitionMetrics;
  logger: Logger;
  /** The clock; tests move it. */
  now?: () => Date;
}

export interface MaintenanceRun {
  /** False when another writer held the lock, and this run did nothing. */
  ran: boolean;
  created: Day[];
  dropped: Day[];
}

/** Days whose partitions are past the retention: their whole day ended before now - retentionDays. */
export function expiredDays(days: Day[], now: Date, retentionDays: number | undefined): Day[] {
  if (retentionDays === undefined) return [];
  const cutoff = now.getTime() - retentionDays * DAY_MS;
  return days.filter((day) => startOfDay(day) + DAY_MS <= cutoff);
}

/** One maintenance run. */
export async function maintainPartitions(settings: MaintenanceSettings, deps: MaintenanceDeps): Promise<MaintenanceRun> {
  const now = (deps.now ?? (() => new Date()))();
  // A failed run closes its connection rather than return it (withClient): it may still hold the lock.
  return withClient(deps.pool, async (client) => {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MAINTENANCE_LOCK]);
    if (!rows[0]!.locked) return { ran: false, created: [], dropped: [] };
    const today = dayOf(now)!;
    const created: Day[] = [];
    for (let ahead = 0; ahead <= settings.aheadDays; ahead += 1) {
      const day = addDays(today, ahead);
      if (await createPartition(client, day)) {
        created.push(day);
        deps.metrics.created(day, 'ahead');
      }
    }
    const dropped: Day[] = [];
    for (const day of expiredDays(await partitionDays(client), now, settings.retentionDays)) {
      await dropPartition(client, day);
      dropped.push(day);
      deps.metrics.dropped(day);
    }
    deps.guard.know(await partitionDays(client));
    // Late positions are noted for the live streams' replay, which reads the last hour.
    await client.query(`DELETE FROM late_positions WHERE received_at < now() - interval '2 hours'`);
    await client.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK]);
    return { ran: true, created, dropped };
  });
}

/** Runs the maintenance now, then every interval, until stopped. A failed run is logged and retried at the next. */
export async function startPartitionMaintenance(settings: MaintenanceSettings, deps: MaintenanceDeps): Promise<WriterUpkeep> {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = () => {
    if (stopped) return running;
    running = maintainPartitions(settings, deps).then(
      (outcome) => {
        if (outcome.ran) deps.logger.debug({ created: outcome.created, dropped: outcome.dropped }, 'trip_locations partitions maintained');
      },
      (error: Error) => {
        deps.metrics.maintenanceFailed();
        deps.logger.error({ err: error.message }, 'trip_locations partition maintenance failed; retrying at the next interval');
      },
    );
    return running;
  };
  await run();
  const timer = setInterval(() => void running.then(run), settings.intervalMs);
  // The writer's stop, not this timer, decides when the process ends.
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

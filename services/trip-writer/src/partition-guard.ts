// Partitions on demand: before a batch is inserted, the partition of every day it touches must exist, so
// a device uploading last week's buffer, or a clock far off, is stored rather than refused for want of a
// partition. The days known to exist are remembered, so on the hot path this costs a set lookup per trip.
import type { Pool } from 'pg';
import type { PartitionMetrics } from './partition-metrics';
import { createPartition, dayOf, type Day } from './trip-partitions';

export interface PartitionGuard {
  /** Makes sure the partitions of these instants' days exist. */
  ensureFor(times: Iterable<string>): Promise<void>;
  /** Replaces what is known with the partitions found in the database (the maintenance's listing). */
  know(days: Iterable<Day>): void;
  /** Forgets what is known: a partition remembered may have been dropped by another writer's retention. */
  forgetAll(): void;
}

export function createPartitionGuard(pool: Pool, metrics: PartitionMetrics): PartitionGuard {
  let known = new Set<Day>();
  // Concurrent batches touching the same new day wait for one creation.
  const creating = new Map<Day, Promise<void>>();

  function ensureDay(day: Day): Promise<void> {
    let pending = creating.get(day);
    if (!pending) {
      pending = createPartition(pool, day)
        .then((created) => {
          known.add(day);
          if (created) metrics.created(day, 'on-demand');
        })
        .finally(() => creating.delete(day));
      creating.set(day, pending);
    }
    return pending;
  }

  return {
    async ensureFor(times) {
      const missing = new Set<Day>();
      for (const time of times) {
        // A time with no day is left for the insert to refuse.
        const day = dayOf(time);
        if (day !== undefined && !known.has(day)) missing.add(day);
      }
      if (missing.size > 0) await Promise.all([...missing].map(ensureDay));
    },
    know(days) {
      known = new Set(days);
    },
    forgetAll() {
      known = new Set();
    },
  };
}

// What the partition upkeep reports on the trip-writer's /metrics, and logs: every partition created or
// dropped is a change of the schema an operator may want to find again.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@fleet/shared/logger';
import { partitionName, type Day } from './trip-partitions';

/** Why a partition was created: ahead of its day by the maintenance, or for a position that needed it. */
export type CreationReason = 'ahead' | 'on-demand';

export interface PartitionMetrics {
  created(day: Day, reason: CreationReason): void;
  dropped(day: Day): void;
  maintenanceFailed(): void;
}

export function createPartitionMetrics(registry: Registry, logger: Logger): PartitionMetrics {
  const created = new Counter({
    name: 'fleet_trip_partitions_created_total',
    help: 'Daily partitions of trip_locations this writer created, ahead of their day or on demand for a position',
    labelNames: ['reason'],
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'fleet_trip_partitions_dropped_total',
    help: 'Daily partitions of trip_locations this writer dropped because their day was older than TRIP_RETENTION_DAYS',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'fleet_trip_partition_maintenance_failures_total',
    help: 'Partition maintenance runs that failed (retried at the next interval)',
    registers: [registry],
  });
  // Both reasons are exported from the start, so a rate over them has a series before the first creation.
  for (const reason of ['ahead', 'on-demand'] satisfies CreationReason[]) created.inc({ reason }, 0);
  return {
    created(day, reason) {
      created.inc({ reason });
      logger.info({ partition: partitionName(day), day, reason }, 'created a trip_locations partition');
    },
    dropped(day) {
      dropped.inc();
      logger.info({ partition: partitionName(day), day }, 'dropped an expired trip_locations partition');
    },
    maintenanceFailed: () => failures.inc(),
  };
}

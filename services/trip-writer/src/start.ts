// The trip-writer: consumes trip-location commands (consume.ts) and stores them in batches (trip-store.ts)
// in daily partitions, created on demand (partition-guard.ts) and ahead, and dropped past the retention,
// by its maintenance (partition-maintenance.ts).
import { topicsFor } from '@fleet/shared/kafka/topics';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { startWriter, type RunningWriter, type WriterContext } from '@fleet/shared/writer-service';
import type { TripWriterConfig } from './config';
import { consumeTripLocations } from './consume';
import { createPartitionGuard, type PartitionGuard } from './partition-guard';
import { startPartitionMaintenance } from './partition-maintenance';
import { createPartitionMetrics, type PartitionMetrics } from './partition-metrics';
import { filteredCounter, type FilterReason } from './position-filters';

export { writerConfig, tripWriterEnvNames, type TripWriterConfig } from './config';

export function start(config: TripWriterConfig, logger: Logger = createLogger('trip-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  let partitions: { guard: PartitionGuard; metrics: PartitionMetrics; filtered: (reason: FilterReason) => void } | undefined;
  // One guard and one set of counters per writer, shared by its upkeep and its handler, whichever asks first.
  const partitionsOf = (context: WriterContext) => {
    if (!partitions) {
      const metrics = createPartitionMetrics(context.registry, context.logger);
      partitions = { metrics, guard: createPartitionGuard(context.pool, metrics), filtered: filteredCounter(context.registry) };
    }
    return partitions;
  };
  return startWriter(
    {
      name: 'trip-writer',
      topic: (topics) => topics.tripLocations,
      upkeep: (context) =>
        startPartitionMaintenance(
          {
            aheadDays: config.TRIP_PARTITIONS_AHEAD_DAYS,
            retentionDays: config.TRIP_RETENTION_DAYS,
            intervalMs: config.TRIP_PARTITION_MAINTENANCE_INTERVAL_MS,
          },
          { pool: context.pool, logger: context.logger, ...partitionsOf(context) },
        ),
      consume: (pool, context) =>
        consumeTripLocations(pool, partitionsOf(context).guard, topicsFor(config.KAFKA_TOPIC_PREFIX).positions, context.published, {
          settings: {
            maxSpeedKmh: config.FILTER_MAX_SPEED_KMH,
            maxAccuracyMeters: config.FILTER_MAX_ACCURACY_M,
            maxHdop: config.FILTER_MAX_HDOP,
            jumpConfirmations: config.FILTER_JUMP_CONFIRMATIONS,
            maxAheadMs: config.FILTER_MAX_AHEAD,
          },
          counted: partitionsOf(context).filtered,
        }),
    },
    config,
    logger,
  );
}

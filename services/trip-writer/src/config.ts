// The trip-writer's environment: every writer's variables, and the upkeep of the daily partitions of
// trip_locations (docs/adr/0005-trip-location-partitions.md).
import { z } from 'zod';
import { duration, loadConfig } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { writerEnv } from '@fleet/shared/writer-service';

const nonNegativeNumber = (fallback: number) => z.coerce.number().min(0).default(fallback);

const tripWriterEnv = writerEnv.extend({
  /** Days after today whose partitions exist before their first position arrives; a week at least. */
  TRIP_PARTITIONS_AHEAD_DAYS: z.coerce.number().check(integer()).min(7).max(366).default(7),
  /**
   * Days of positions kept, counted back from now by gps_time; a day's partition is dropped once its
   * whole day is older. Unset (or empty): everything is kept.
   */
  TRIP_RETENTION_DAYS: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().check(integer()).positive().optional(),
  ),
  /** How often partitions are created ahead and expired ones dropped; the first run is at start. */
  TRIP_PARTITION_MAINTENANCE_INTERVAL_MS: z.coerce.number().check(integer()).min(1000).default(3_600_000),
  /**
   * A position implying a speed above this (km/h) from its device's newest unfiltered fix is stored as
   * filtered (a jump); 0 turns the rule off.
   */
  FILTER_MAX_SPEED_KMH: nonNegativeNumber(1000),
  /**
   * A jump that ends this many fixes in a row, each plausible from the one before, since the device's
   * newest unfiltered fix, is a new track and is not filtered; 0 or 1: a jump is always filtered.
   */
  FILTER_JUMP_CONFIRMATIONS: z.coerce.number().check(integer()).min(0).max(100).default(3),
  /**
   * A position dated more than this after its receipt is stored as filtered (ahead): a clock glitch that
   * would otherwise be the device's newest fix, making the real ones after it late; 0: off.
   */
  FILTER_MAX_AHEAD: duration('5m'),
  /** A position whose `accuracy` attribute (metres) is above this is stored as filtered; 0 (the default): off. */
  FILTER_MAX_ACCURACY_M: nonNegativeNumber(0),
  /** A position whose `hdop` attribute is above this is stored as filtered; 0 (the default): off. */
  FILTER_MAX_HDOP: nonNegativeNumber(0),
});

export type TripWriterConfig = z.output<typeof tripWriterEnv>;

/** Every variable the trip-writer reads, so that the deployment files can be checked against it. */
export const tripWriterEnvNames = Object.keys(tripWriterEnv.shape);

export function writerConfig(env: NodeJS.ProcessEnv = process.env): TripWriterConfig {
  return loadConfig(tripWriterEnv, env);
}

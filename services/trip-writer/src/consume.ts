// The trip-writer's Kafka batch handler: trip-location commands, decoded with their wire schema, stored
// by trip-store in the partitions the guard has made sure of, and answered with the row's id and the
// sentence the client reads in `information`.
import type { Pool } from 'pg';
import { positionEvent, tripLocationCommandSchema, type CommandHandler, type PositionEvent, type TripLocationCommand } from '@fleet/shared';
import type { PartitionGuard } from './partition-guard';
import { storeTripLocations, type TripLocationRow } from './trip-store';

export function tripInformation(trip: TripLocationCommand, duplicate: boolean): string {
  return duplicate
    ? `Trip location of device ${trip.imei} at ${trip.gpsTime} was already recorded`
    : `Trip location of device ${trip.imei} at ${trip.gpsTime} has been recorded`;
}

/**
 * PostgreSQL's "no partition of relation found for row": a check violation that, unlike a CHECK
 * constraint's, names no constraint.
 */
function isMissingPartition(error: unknown): boolean {
  const { code, constraint } = error as { code?: string; constraint?: string };
  return code === '23514' && constraint === undefined;
}

async function storeInPartitions(pool: Pool, guard: PartitionGuard, trips: TripLocationCommand[]): Promise<TripLocationRow[]> {
  const gpsTimes = trips.map((trip) => trip.gpsTime);
  await guard.ensureFor(gpsTimes);
  try {
    return await storeTripLocations(pool, trips);
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    // A partition this writer remembered was dropped since, by another writer's retention: look again.
    guard.forgetAll();
    await guard.ensureFor(gpsTimes);
    return storeTripLocations(pool, trips);
  }
}

/**
 * `positionsTopic`: where each committed position is announced for live streams, one message per device
 * and batch, keyed by IMEI, its positions in id order. A position stored before (a retry) is not new.
 */
export function consumeTripLocations(
  pool: Pool,
  guard: PartitionGuard,
  positionsTopic: string,
): CommandHandler<typeof tripLocationCommandSchema> {
  return {
    schema: tripLocationCommandSchema,
    async store(trips) {
      const rows = await storeInPartitions(pool, guard, trips);
      return rows.map((row, index) => ({ ...row, information: tripInformation(trips[index]!, row.duplicate) }));
    },
    announce(stored) {
      const byDevice = new Map<string, PositionEvent[]>();
      for (const { command, result } of stored) {
        let events = byDevice.get(command.imei);
        if (!events) byDevice.set(command.imei, (events = []));
        events.push(positionEvent(command, result.id));
      }
      return [...byDevice].map(([imei, events]) => ({
        topic: positionsTopic,
        message: { key: imei, value: JSON.stringify(events.sort((a, b) => a.id - b.id)) },
      }));
    },
  };
}

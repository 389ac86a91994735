// The trip-writer's Kafka batch handler: trip-location commands, decoded with their wire schema, stored
// by trip-store in the partitions the guard has made sure of, and answered with the row's id and the
// sentence the client reads in `information`.
import type { Pool } from 'pg';
import { type Announcement, type CommandHandler } from '@fleet/shared/kafka/command-consumer';
import type { TopicLayout } from '@fleet/shared/kafka/topic-layout';
import { positionEvent, type PositionEvent } from '@fleet/shared/schemas/position-event';
import { tripLocationCommandSchema, type TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import type { PartitionGuard } from './partition-guard';
import type { FilterReason, FilterSettings } from './position-filters';
import { NewestFixes } from './newest-fixes';
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

async function storeInPartitions(
  pool: Pool,
  guard: PartitionGuard,
  trips: TripLocationCommand[],
  filters: FilterSettings,
  remembered: NewestFixes,
): Promise<TripLocationRow[]> {
  const gpsTimes = trips.map((trip) => trip.gpsTime);
  await guard.ensureFor(gpsTimes);
  try {
    return await storeTripLocations(pool, trips, filters, remembered);
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    // A partition this writer remembered was dropped since, by another writer's retention: look again.
    guard.forgetAll();
    await guard.ensureFor(gpsTimes);
    return storeTripLocations(pool, trips, filters, remembered);
  }
}

export interface TripFiltering {
  settings: FilterSettings;
  /** Counts a position newly stored as filtered. */
  counted: (reason: FilterReason) => void;
}

/**
 * Characters of events one announcement carries at most: a partition's batch can hold thousands of
 * positions, and 256 Ki characters (at most 768 KiB of UTF-8) stay under the broker's 1 MB message limit.
 */
const ANNOUNCEMENT_CHARS = 256 * 1024;

/**
 * The messages announcing a batch's committed positions on `topic`. Each device's positions reach the
 * partition a message keyed by its IMEI reaches (`partitionOf`), in id order, so they keep their order;
 * the devices bound for one partition share its messages, so a batch from a hundred devices costs the
 * writer and the broker a message or a few rather than a hundred. While the topic's partitions are not
 * known, each device's positions go in messages of their own, keyed by its IMEI.
 */
export function positionAnnouncements(
  topic: string,
  events: PositionEvent[],
  partitionOf: (imei: string) => number | undefined,
): Announcement[] {
  const places = new Map<number | string, string[]>();
  for (const event of [...events].sort((a, b) => a.id - b.id)) {
    const place = partitionOf(event.imei) ?? event.imei;
    let encoded = places.get(place);
    if (!encoded) places.set(place, (encoded = []));
    encoded.push(JSON.stringify(event));
  }
  const announcements: Announcement[] = [];
  for (const [place, encoded] of places) {
    const address = typeof place === 'number' ? { key: null, partition: place } : { key: place };
    let chunk: string[] = [];
    let chars = 0;
    const flush = () => announcements.push({ topic, message: { ...address, value: `[${chunk.join(',')}]` } });
    for (const event of encoded) {
      if (chunk.length > 0 && chars + event.length > ANNOUNCEMENT_CHARS) {
        flush();
        chunk = [];
        chars = 0;
      }
      chunk.push(event);
      chars += event.length + 1;
    }
    flush();
  }
  return announcements;
}

/**
 * `positionsTopic`: where each committed position is announced for live streams (positionAnnouncements),
 * placed by `published`, its partitions. A position stored before by a client's retry is not new, but
 * one whose very command comes again is announced again: the writer that stored it may have stopped
 * before announcing it. A filtered one (position-filters.ts) is stored and answered but never
 * announced. The handler remembers its devices' newest fixes (newest-fixes.ts) until the group next
 * gives it its partitions.
 */
export function consumeTripLocations(
  pool: Pool,
  guard: PartitionGuard,
  positionsTopic: string,
  published: TopicLayout,
  filtering: TripFiltering,
): CommandHandler<typeof tripLocationCommandSchema> {
  const remembered = new NewestFixes();
  return {
    schema: tripLocationCommandSchema,
    async store(trips) {
      const rows = await storeInPartitions(pool, guard, trips, filtering.settings, remembered);
      return rows.map(({ id, duplicate, redelivered, filtered }, index) => {
        if (filtered !== null && !duplicate) filtering.counted(filtered);
        const information = tripInformation(trips[index]!, duplicate);
        return { id, duplicate, redelivered, silent: filtered !== null, information };
      });
    },
    announce(stored) {
      const events = stored.map(({ command, result }) => positionEvent(command, result.id));
      return positionAnnouncements(positionsTopic, events, (imei) => published.partitionOf(positionsTopic, imei));
    },
    assigned: () => remembered.forgetAll(),
  };
}

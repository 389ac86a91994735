// Positions in PostgreSQL, read by device. Last locations are primary-key lookups in
// device_last_locations, many devices' in one statement when many are asked for at once; a history page is one range scan of the (imei, gps_time) index of
// trip_locations, always bounded by device and by a time range so that a table partitioned by
// gps_time reads only the partitions the range covers.
//
// Named statements, so that PostgreSQL plans each once per connection. On the partitioned trip_locations
// that is a generic plan, which locks every daily partition at each execution and prunes them only when
// the executor starts; measured, it still costs the database about half the CPU of a plan made for each
// page (what an unnamed statement or plan_cache_mode=force_custom_plan gets). Figures: docs/performance-history.md, "Position reads".
import type { Pool } from 'pg';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import type { Attributes } from '@fleet/shared/schemas/trip-location.schema';
import type { HistoryPageQuery, PositionFinder, StoredPosition } from './read-positions';
import { epochMicros, isoMillis, timestampsAsText } from './stored-time';
import { boundedByBytes, cutPage, PAGE_MAX_BYTES, type Slice, type Weighed } from '../page-bytes';

/** A position as the read routes answer it: the shape live streams send too (shared's PositionEvent). */
export type Position = PositionEvent;

/** A row as pg answers it under timestampsAsText: timestamps are PostgreSQL's text. */
export interface PositionRow {
  id: string;
  imei: string;
  gps_time: string;
  latitude: number;
  longitude: number;
  speed: number | null;
  ignition: boolean | null;
  angle: number | null;
  satellite: number | null;
  door1: boolean | null;
  door2: boolean | null;
  temp: number | null;
  fuel_percentage: number | null;
  attributes: Attributes | null;
  received_at: string;
}

export const POSITION_COLUMNS =
  'imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, attributes, received_at';
/** About the bytes a position's JSON takes beside its attributes (names and values of the other fields). */
const POSITION_COLUMNS_BYTES = 300;

/** The position's columns, each qualified by the table alias given: for statements that join. */
export function positionColumnsOf(table: string): string {
  return POSITION_COLUMNS.split(', ')
    .map((name) => `${table}.${name}`)
    .join(', ');
}

/** The most rows a reconnecting stream is sent in one connection. */
export const REPLAY_LIMIT = 10_000;
/**
 * About the most bytes of positions a reconnecting stream is sent in one connection: they are written at
 * once, so they stay well within what a stream may have waiting for its client before it is cut as slow
 * (sse.ts), and a replay of large positions is read a part at a time rather than whole into memory.
 */
export const REPLAY_MAX_BYTES = 512 * 1024;

/**
 * What a reconnecting stream missed: each device's rows committed after the last id sent on its
 * partition and received after $3, in the order they were committed within a partition (row ids), as
 * many as REPLAY_LIMIT and REPLAY_MAX_BYTES ($4) allow, and the one after them (whether more follow).
 * Fixes of the last day before $3 are read from the days' partitions, which the bound on gps_time
 * prunes to; older ones, a late upload's, from late_positions, where the trip-writer notes every fix
 * stored more than a day after its time.
 */
const REPLAY = boundedByBytes({
  inner: `
    SELECT * FROM (
      SELECT t.id, ${positionColumnsOf('t')}
      FROM trip_locations t
      JOIN unnest($1::text[], $2::bigint[]) AS c(imei, after) ON t.imei = c.imei AND t.id > c.after
      WHERE t.received_at > $3 AND t.gps_time > $3::timestamptz - interval '1 day' AND t.filtered IS NULL
      UNION ALL
      SELECT t.id, ${positionColumnsOf('t')}
      FROM late_positions l
      JOIN unnest($1::text[], $2::bigint[]) AS c(imei, after) ON l.imei = c.imei AND l.id > c.after
      JOIN trip_locations t ON t.id = l.id AND t.gps_time = l.gps_time
      WHERE l.received_at > $3 AND l.gps_time <= $3::timestamptz - interval '1 day'
    ) missed
    ORDER BY id
    LIMIT ${REPLAY_LIMIT + 1}`,
  weight: `coalesce(octet_length(attributes::text), 0) + ${POSITION_COLUMNS_BYTES}`,
  order: 'id',
  budgetParameter: '$4',
});

/** What a reconnecting stream asks for: per device, the last row id it was sent, and since when. */
export interface ReplayRequest {
  imeis: readonly string[];
  /** For each device of `imeis`, in order: the last row id sent on its partition. */
  afters: readonly number[];
  receivedAfter: Date;
}

/** The positions a stream missed (see REPLAY) in row-id order, and whether more follow than one connection replays. */
export async function findMissedPositions(pool: Pool, { imeis, afters, receivedAfter }: ReplayRequest): Promise<Slice<Position>> {
  const result = await pool.query<PositionRow & Weighed>({
    text: REPLAY,
    values: [imeis, afters, receivedAfter.toISOString(), REPLAY_MAX_BYTES],
    types: timestampsAsText,
  });
  const { items, more } = cutPage(result.rows, REPLAY_LIMIT, REPLAY_MAX_BYTES);
  return { items: items.map(toPosition), more };
}

const LAST_LOCATION = `SELECT trip_location_id AS id, ${POSITION_COLUMNS} FROM device_last_locations WHERE imei = $1`;
const LAST_LOCATIONS = `SELECT trip_location_id AS id, ${POSITION_COLUMNS} FROM device_last_locations WHERE imei = ANY($1::text[])`;

/**
 * `after` is the keyset: the exact gps_time of the last row already answered, or -infinity on a first
 * page. (imei, gps_time) is unique, so gps_time alone orders a device's positions totally.
 */
const HISTORY_PAGE = boundedByBytes({
  inner: `
    SELECT id, ${POSITION_COLUMNS}, filtered
    FROM trip_locations
    WHERE imei = $1 AND gps_time >= $2 AND gps_time < $3 AND gps_time > $4 AND (filtered IS NULL OR $6)
    ORDER BY gps_time
    LIMIT $5`,
  // The attributes as JSON, and about what the columns take beside them.
  weight: `coalesce(octet_length(attributes::text), 0) + ${POSITION_COLUMNS_BYTES}`,
  order: 'gps_time',
  budgetParameter: '$7',
});

export function toPosition(row: PositionRow): Position {
  return {
    id: Number(row.id),
    imei: row.imei,
    gpsTime: isoMillis(row.gps_time),
    latitude: row.latitude,
    longitude: row.longitude,
    speed: row.speed,
    ignition: row.ignition,
    angle: row.angle,
    satellite: row.satellite,
    door1: row.door1,
    door2: row.door2,
    temp: row.temp,
    fuel_percentage: row.fuel_percentage,
    attributes: row.attributes,
    receivedAt: isoMillis(row.received_at),
  };
}

/** The last location of each device named, by IMEI; a device without one is absent. */
export async function findLastLocations(pool: Pool, imeis: readonly string[]): Promise<Map<string, Position>> {
  // A single device takes the plain lookup: = ANY over one value costs PostgreSQL more than = does. The
  // lookup of a list stays unnamed: named, its generic plan made while device_last_locations was nearly
  // empty is a sequential scan, kept as the table grows until it is next analyzed.
  const result =
    imeis.length === 1
      ? await pool.query<PositionRow>({ name: 'find-last-location', text: LAST_LOCATION, values: [imeis[0]], types: timestampsAsText })
      : await pool.query<PositionRow>({ text: LAST_LOCATIONS, values: [imeis], types: timestampsAsText });
  return new Map(result.rows.map((row) => [row.imei, toPosition(row)]));
}

/** The page of the device's positions in [from, to) after `after`, oldest first (PositionFinder.findHistoryPage). */
export async function findHistoryPage(pool: Pool, query: HistoryPageQuery): Promise<Slice<StoredPosition>> {
  const result = await pool.query<PositionRow & Weighed & { filtered: string | null }>({
    name: 'find-trip-location-page',
    text: HISTORY_PAGE,
    values: [query.imei, query.from, query.to, query.after ?? '-infinity', query.limit + 1, query.includeFiltered, PAGE_MAX_BYTES],
    types: timestampsAsText,
  });
  const { items, more } = cutPage(result.rows, query.limit);
  return {
    items: items.map((row) => ({
      position: row.filtered === null ? toPosition(row) : { ...toPosition(row), filtered: row.filtered },
      gpsTimeMicros: epochMicros(row.gps_time),
    })),
    more,
  };
}

/** The position reader's finder over this database. */
export function positionStore(pool: Pool): PositionFinder {
  return {
    findLastLocations: (imeis) => findLastLocations(pool, imeis),
    findHistoryPage: (query) => findHistoryPage(pool, query),
  };
}

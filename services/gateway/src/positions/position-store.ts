// Positions in PostgreSQL, read by device. Last locations are primary-key lookups in
// device_last_locations, many devices' in one statement when many are asked for at once; a history page is one range scan of the (imei, gps_time) index of
// trip_locations, always bounded by device and by a time range so that a table partitioned by
// gps_time reads only the partitions the range covers.
//
// Named statements, so that PostgreSQL plans each once per connection. On the partitioned trip_locations
// that is a generic plan, which locks every daily partition at each execution and prunes them only when
// the executor starts; measured, it still costs the database about half the CPU of a plan made for each
// page (what an unnamed statement or plan_cache_mode=force_custom_plan gets). Figures: docs/performance.md.
import type { Pool } from 'pg';
import type { Attributes, PositionEvent } from '@fleet/shared';
import { isoMillis, timestampsAsText } from './stored-time';

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

const LAST_LOCATION = `SELECT trip_location_id AS id, ${POSITION_COLUMNS} FROM device_last_locations WHERE imei = $1`;
const LAST_LOCATIONS = `SELECT trip_location_id AS id, ${POSITION_COLUMNS} FROM device_last_locations WHERE imei = ANY($1::text[])`;

/**
 * `after` is the keyset: the exact gps_time of the last row already answered, or -infinity on a first
 * page. (imei, gps_time) is unique, so gps_time alone orders a device's positions totally.
 */
const HISTORY_PAGE = `
  SELECT id, ${POSITION_COLUMNS}
  FROM trip_locations
  WHERE imei = $1 AND gps_time >= $2 AND gps_time < $3 AND gps_time > $4
  ORDER BY gps_time
  LIMIT $5`;

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
  // A single device takes the plain lookup: = ANY over one value costs PostgreSQL more than = does.
  const result =
    imeis.length === 1
      ? await pool.query<PositionRow>({ name: 'find-last-location', text: LAST_LOCATION, values: [imeis[0]], types: timestampsAsText })
      : await pool.query<PositionRow>({ name: 'find-last-locations', text: LAST_LOCATIONS, values: [imeis], types: timestampsAsText });
  return new Map(result.rows.map((row) => [row.imei, toPosition(row)]));
}

export interface HistoryPageQuery {
  imei: string;
  from: Date;
  to: Date;
  /** Exact timestamp text of the last position already answered; absent on a first page. */
  after?: string;
  limit: number;
}

export interface StoredPosition {
  position: Position;
  /** Its exact gps_time as PostgreSQL's text, microseconds included; epochMicros reads it. */
  exactGpsTime: string;
}

/** Up to `limit` positions of the device in [from, to) after `after`, oldest first. */
export async function findHistoryPage(pool: Pool, query: HistoryPageQuery): Promise<StoredPosition[]> {
  const result = await pool.query<PositionRow>({
    name: 'find-trip-location-page',
    text: HISTORY_PAGE,
    values: [query.imei, query.from, query.to, query.after ?? '-infinity', query.limit],
    types: timestampsAsText,
  });
  return result.rows.map((row) => ({ position: toPosition(row), exactGpsTime: row.gps_time }));
}

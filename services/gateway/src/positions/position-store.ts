// Positions in PostgreSQL, read by device. The last location is one primary-key lookup in
// device_last_locations; a history page is one range scan of the (imei, gps_time) index of
// trip_locations, always bounded by device and by a time range so that a table partitioned by
// gps_time reads only the partitions the range covers. Named statements: each connection plans them once.
import type { Pool } from 'pg';

/** A position as the read routes answer it. */
export interface Position {
  id: number;
  imei: string;
  gpsTime: string;
  latitude: number;
  longitude: number;
  speed: number;
  ignition: boolean;
  angle: number | null;
  satellite: number | null;
  door1: boolean | null;
  door2: boolean | null;
  temp: number | null;
  fuel_percentage: number | null;
  receivedAt: string;
}

interface PositionRow {
  id: string;
  imei: string;
  gps_time: Date;
  latitude: number;
  longitude: number;
  speed: number;
  ignition: boolean;
  angle: number | null;
  satellite: number | null;
  door1: boolean | null;
  door2: boolean | null;
  temp: number | null;
  fuel_percentage: number | null;
  received_at: Date;
}

interface HistoryRow extends PositionRow {
  /** gps_time in microseconds since the epoch, exact: a JS Date holds milliseconds only. */
  gps_time_us: string;
}

const POSITION_COLUMNS =
  'imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at';

const LAST_LOCATION = `SELECT trip_location_id AS id, ${POSITION_COLUMNS} FROM device_last_locations WHERE imei = $1`;

/**
 * `after` is the keyset: the exact gps_time of the last row already answered, or -infinity on a first
 * page. (imei, gps_time) is unique, so gps_time alone orders a device's positions totally.
 */
const HISTORY_PAGE = `
  SELECT id, ${POSITION_COLUMNS}, (extract(epoch FROM gps_time) * 1000000)::int8 AS gps_time_us
  FROM trip_locations
  WHERE imei = $1 AND gps_time >= $2 AND gps_time < $3 AND gps_time > $4
  ORDER BY gps_time
  LIMIT $5`;

function toPosition(row: PositionRow): Position {
  return {
    id: Number(row.id),
    imei: row.imei,
    gpsTime: row.gps_time.toISOString(),
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
    receivedAt: row.received_at.toISOString(),
  };
}

export async function findLastLocation(pool: Pool, imei: string): Promise<Position | undefined> {
  const result = await pool.query<PositionRow>({ name: 'find-last-location', text: LAST_LOCATION, values: [imei] });
  const row = result.rows[0];
  return row ? toPosition(row) : undefined;
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
  /** Its exact gps_time, in microseconds since the epoch, as a decimal string. */
  gpsTimeMicros: string;
}

/** Up to `limit` positions of the device in [from, to) after `after`, oldest first. */
export async function findHistoryPage(pool: Pool, query: HistoryPageQuery): Promise<StoredPosition[]> {
  const result = await pool.query<HistoryRow>({
    name: 'find-trip-location-page',
    text: HISTORY_PAGE,
    values: [query.imei, query.from, query.to, query.after ?? '-infinity', query.limit],
  });
  return result.rows.map((row) => ({ position: toPosition(row), gpsTimeMicros: row.gps_time_us }));
}

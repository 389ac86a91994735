// The volume the position reads are measured on: positions of many devices over the last 30 days,
// generated inside PostgreSQL (INSERT … SELECT over generate_series) rather than posted through the
// stack, so that ten million rows take minutes instead of hours. It works on trip_locations either as
// one table or range-partitioned by UTC day of gps_time; partitioned, the days it fills are created
// first, named and bounded as the trip-writer names and bounds them (trip_locations_pYYYYMMDD).
import { escapeIdentifier, escapeLiteral, Pool, type PoolClient } from 'pg';

export interface VolumeSize {
  positions: number;
  devices: number;
}

export interface Volume {
  /** Positions actually stored: the same number for every device. */
  positions: number;
  devices: number;
  days: number;
  /** The window the positions lie in: from <= gpsTime < to. */
  from: string;
  to: string;
  tripLocationsPartitioned: boolean;
  generationSeconds: number;
  /** trip_locations on disk, its indexes and TOAST included, per stored position; absent from older runs. */
  bytesPerPosition?: number;
}

export const VOLUME_DAYS = 30;
export const DAY_MS = 86_400_000;
/** Devices per statement: about half a million rows, so that one statement's memory and WAL stay bounded. */
const ROWS_PER_CHUNK = 500_000;

/**
 * The IMEI of generated device n (1-based): 15 digits as a real IMEI, in an order where text order is
 * numeric order, so a chunk of devices is a contiguous range of the (imei, gps_time) index.
 */
export function volumeImei(device: number): string {
  return `35${String(device).padStart(13, '0')}`;
}

/** The positions of devices first..last; every value is computed from the device and position numbers. */
const INSERT_POSITIONS = `
  INSERT INTO trip_locations
    (imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at)
  SELECT
    '35' || lpad(d::text, 13, '0'),
    t.gps_time,
    -6.2 + (d % 100) / 100.0 + (i % 500) / 10000.0,
    106.8 + (d % 37) / 100.0 - (i % 500) / 10000.0,
    (i * 7 + d) % 120,
    i % 10 <> 0,
    (i * 37 + d) % 360,
    4 + (i + d) % 9,
    i % 3 = 0,
    false,
    -20 + (i % 50) / 10.0,
    100 - (i % 100),
    t.gps_time + interval '2 seconds'
  FROM generate_series($1::int, $2::int) AS d
  CROSS JOIN generate_series(0, $3::int - 1) AS i
  -- Evenly spaced over the window, each device shifted by its own fraction of a step so that devices
  -- do not all report at the same instants; whole milliseconds, as a device's clock sends them.
  CROSS JOIN LATERAL (
    SELECT 'epoch'::timestamptz + ($4::bigint + floor((i + (d::bigint * 7919 % 997) / 997.0) * $5::float8))::bigint * interval '1 millisecond'
      AS gps_time
  ) AS t`;

/** The newest position of each device of the chunk, by the writer's rule: a newer one always wins. */
const FILL_LAST_LOCATIONS = `
  INSERT INTO device_last_locations AS last
    (imei, trip_location_id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at,
     last_seen_at)
  SELECT DISTINCT ON (imei)
    imei, id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at, received_at
  FROM trip_locations
  WHERE imei BETWEEN $1 AND $2 AND gps_time >= $3 AND gps_time < $4
  ORDER BY imei, gps_time DESC
  ON CONFLICT (imei) DO UPDATE SET
    trip_location_id = excluded.trip_location_id, gps_time = excluded.gps_time, latitude = excluded.latitude,
    longitude = excluded.longitude, speed = excluded.speed, ignition = excluded.ignition, angle = excluded.angle,
    satellite = excluded.satellite, door1 = excluded.door1, door2 = excluded.door2, temp = excluded.temp,
    fuel_percentage = excluded.fuel_percentage, received_at = excluded.received_at, last_seen_at = excluded.last_seen_at
  WHERE last.gps_time < excluded.gps_time`;

const INSUFFICIENT_PRIVILEGE = '42501';

type Queryable = Pool | PoolClient;

export async function isTripLocationsPartitioned(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ relkind: string }>(
    `SELECT relkind FROM pg_class WHERE relname = 'trip_locations' AND relnamespace = current_schema()::regnamespace`,
  );
  return rows[0]?.relkind === 'p';
}

/** A UTC day as YYYY-MM-DD. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Creates the daily partitions of trip_locations for the days from `fromMs` to `toMs` (both included)
 * that are missing. The names and bounds are formatted here from dates, never from input.
 */
export async function ensureDailyPartitions(db: Queryable, fromMs: number, toMs: number): Promise<void> {
  for (let day = Date.parse(`${dayOf(fromMs)}T00:00:00Z`); day <= toMs; day += DAY_MS) {
    const name = `trip_locations_p${dayOf(day).replaceAll('-', '')}`;
    const bound = (ms: number) => escapeLiteral(`${dayOf(ms)} 00:00:00+00`);
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${escapeIdentifier(name)} PARTITION OF trip_locations FOR VALUES FROM (${bound(day)}) TO (${bound(day + DAY_MS)})`,
    );
  }
}

/**
 * Generates `size` positions spread over the 30 days ending at `end`, fills device_last_locations from
 * them, and analyses both tables so that the first reads are planned on the real sizes.
 */
export async function generateVolume(
  databaseUrl: string,
  size: VolumeSize,
  progress: (message: string) => void = () => undefined,
  end = new Date(),
): Promise<Volume> {
  const started = Date.now();
  const devices = size.devices;
  const perDevice = Math.max(1, Math.round(size.positions / devices));
  const toMs = end.getTime();
  const fromMs = toMs - VOLUME_DAYS * DAY_MS;
  const stepMs = (toMs - fromMs) / perDevice;
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const client = await pool.connect();
  try {
    // Generated rows can be generated again: losing the last commits to a crash costs nothing here.
    await client.query('SET synchronous_commit = off');
    const partitioned = await isTripLocationsPartitioned(client);
    if (partitioned) await ensureDailyPartitions(client, fromMs, toMs - 1);

    const devicesPerChunk = Math.max(1, Math.floor(ROWS_PER_CHUNK / perDevice));
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    for (let first = 1; first <= devices; first += devicesPerChunk) {
      const last = Math.min(devices, first + devicesPerChunk - 1);
      await client.query(INSERT_POSITIONS, [first, last, perDevice, fromMs, stepMs]);
      await client.query(FILL_LAST_LOCATIONS, [volumeImei(first), volumeImei(last), new Date(fromMs), new Date(toMs)]);
      progress(`${last * perDevice} positions stored after ${seconds()} s`);
    }
    // VACUUM as well as ANALYZE: it sets the hint bits and the visibility map now, instead of the first
    // reads of the measured scenarios writing them; the checkpoint keeps the generation's dirty pages
    // from being flushed while they are measured.
    await client.query('VACUUM (ANALYZE) trip_locations, device_last_locations');
    progress(`vacuumed and analysed after ${seconds()} s`);
    await client.query('CHECKPOINT').catch((error: { code?: string }) => {
      // A role without the right to checkpoint (a stack measured elsewhere) measures without one.
      if (error.code !== INSUFFICIENT_PRIVILEGE) throw error;
    });
    // Every partition's heap, indexes and TOAST (pg_partition_tree lists a plain table as itself).
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes FROM pg_partition_tree('trip_locations')`,
    );
    return {
      positions: perDevice * devices,
      devices,
      days: VOLUME_DAYS,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      tripLocationsPartitioned: partitioned,
      generationSeconds: (Date.now() - started) / 1000,
      bytesPerPosition: Number(rows[0]!.bytes) / (perDevice * devices),
    };
  } finally {
    client.release();
    await pool.end();
  }
}

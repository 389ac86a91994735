// SQL for trip locations. A batch is written with one INSERT over unnest()ed arrays; positions that
// already exist (same imei and gps_time) are left as they are and answered with their existing row.
// The same statement moves each device's last location forward (device_last_locations), so the two
// commit together or not at all. The insert is named: each connection parses and plans it once, where
// an unnamed statement is planned anew for each batch, which at a quiet fleet's batch of one position
// cost PostgreSQL more than the insert itself. The lookups by a list of devices stay unnamed: after five
// runs PostgreSQL keeps a named statement's generic plan, costed for the table as it was then, and
// planned on the near-empty table of a new fleet that is a sequential scan, kept as the table grows
// until it is next analyzed (milliseconds a batch at 5,000 devices).
import type { Pool, PoolClient } from 'pg';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { filterReasons, fixOf, isNewer, type FilterReason, type FilterSettings, type Fix } from './position-filters';
import type { NewestFixes } from './newest-fixes';

/** The row a trip location command came to. */
export interface TripLocationRow {
  id: number;
  /** True when the row existed before this command (a retry or a redelivery). */
  duplicate: boolean;
  /**
   * True when the row existed before and holds this very command, received at the same instant: the
   * command delivered again after a writer committed it and stopped before sending what followed (a
   * client's retry is a new request, received later). Only the first of a key in a batch.
   */
  redelivered: boolean;
  /** Why the position is not fit to use (position-filters.ts); null when it is. */
  filtered: FilterReason | null;
}

/** The filters' defaults: latitude and longitude both 0, and a jump faster than 1000 km/h. */
export const DEFAULT_FILTERS: FilterSettings = {
  maxSpeedKmh: 1000,
  maxAccuracyMeters: 0,
  maxHdop: 0,
  jumpConfirmations: 3,
  maxAheadMs: 5 * 60_000,
};

/**
 * The insert, and the newest of the stored positions per device as its last location, in one statement.
 * Only positions inserted now are candidates: one that already existed was a candidate when it was
 * stored. A late position (older gps_time) leaves a newer last location as it is, but still moves the
 * device's last_seen_at, which follows receipt. A late position is noted in late_positions as well. Rows reach the upsert
 * sorted by imei, so two batches touching the same devices lock their rows in the same order and cannot
 * deadlock; DISTINCT ON keeps one row per device, which ON CONFLICT DO UPDATE requires.
 */
/**
 * A position whose fix is older than its receipt by more than this is late: it is also noted in
 * late_positions, where a live stream's replay finds it without probing every daily partition.
 */
export const LATE_AFTER = "interval '1 day'";

const INSERT_BATCH = `
  WITH inserted AS (
    INSERT INTO trip_locations
      (imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at,
       attributes, filtered)
    SELECT * FROM unnest(
      $1::text[], $2::timestamptz[], $3::float8[], $4::float8[], $5::float8[], $6::bool[], $7::float8[],
      $8::int[], $9::bool[], $10::bool[], $11::float8[], $12::float8[], $13::timestamptz[], $14::jsonb[], $15::text[])
    ON CONFLICT (imei, gps_time) DO NOTHING
    RETURNING *
  ), received AS (
    SELECT *, max(received_at) OVER (PARTITION BY imei) AS seen FROM inserted
  ), latest AS (
    INSERT INTO device_last_locations AS last
      (imei, trip_location_id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at,
       attributes, last_seen_at)
    SELECT DISTINCT ON (imei)
      imei, id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at,
      attributes, seen
    FROM received
    WHERE filtered IS NULL
    ORDER BY imei, gps_time DESC
    ON CONFLICT (imei) DO UPDATE SET
      trip_location_id = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.trip_location_id ELSE last.trip_location_id END,
      gps_time = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.gps_time ELSE last.gps_time END,
      latitude = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.latitude ELSE last.latitude END,
      longitude = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.longitude ELSE last.longitude END,
      speed = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.speed ELSE last.speed END,
      ignition = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.ignition ELSE last.ignition END,
      angle = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.angle ELSE last.angle END,
      satellite = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.satellite ELSE last.satellite END,
      door1 = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.door1 ELSE last.door1 END,
      door2 = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.door2 ELSE last.door2 END,
      temp = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.temp ELSE last.temp END,
      fuel_percentage = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.fuel_percentage ELSE last.fuel_percentage END,
      received_at = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.received_at ELSE last.received_at END,
      attributes = CASE WHEN excluded.gps_time > last.gps_time THEN excluded.attributes ELSE last.attributes END,
      last_seen_at = greatest(last.last_seen_at, excluded.last_seen_at)
  ), heard AS (
    -- A device that sent only filtered positions was still heard from: its last location stays, its
    -- last_seen_at moves. (Devices with a position fit to use are the upsert's above, never both.)
    UPDATE device_last_locations AS last SET last_seen_at = greatest(last.last_seen_at, f.seen)
    FROM (SELECT imei, max(received_at) AS seen FROM inserted GROUP BY imei HAVING bool_and(filtered IS NOT NULL)) f
    WHERE last.imei = f.imei
  ), late AS (
    INSERT INTO late_positions (id, imei, gps_time, received_at)
    SELECT id, imei, gps_time, received_at FROM inserted WHERE filtered IS NULL AND gps_time < received_at - ${LATE_AFTER}
  )
  SELECT id, imei, gps_time, filtered FROM inserted`;

/** Each device's newest stored fix fit to use: what a new fix's implied speed is measured from. */
const NEWEST_FIXES = 'SELECT imei, gps_time, latitude, longitude FROM device_last_locations WHERE imei = ANY($1::text[])';

/**
 * The rows of positions that were stored before. The condition on gps_time alone lets the planner prune
 * to the partitions of those instants: joined only with unnest(), the lookup would open, and lock, every
 * daily partition of the table, and a transaction past max_locks_per_transaction fails. It stays unnamed
 * for the same reason: a named statement's generic plan prunes only after it has locked every partition.
 */
const SELECT_EXISTING = `
  SELECT t.id, t.imei, t.gps_time, t.filtered, t.received_at
  FROM trip_locations t
  JOIN unnest($1::text[], $2::timestamptz[]) AS k(imei, gps_time) ON t.imei = k.imei AND t.gps_time = k.gps_time
  WHERE t.gps_time = ANY($2::timestamptz[])`;

/**
 * The newest positions stored as jumps since each device's newest unfiltered fix, up to $3 a device. The
 * lower bound on gps_time alone ($4, the oldest of those fixes) lets the planner prune to the partitions
 * since then, as SELECT_EXISTING's does.
 */
const JUMPS_AFTER = `
  SELECT k.imei, j.gps_time, j.latitude, j.longitude
  FROM unnest($1::text[], $2::timestamptz[]) AS k(imei, since)
  CROSS JOIN LATERAL (
    SELECT t.gps_time, t.latitude, t.longitude FROM trip_locations t
    WHERE t.imei = k.imei AND t.gps_time > k.since AND t.gps_time > $4::timestamptz AND t.filtered = 'jump'
    ORDER BY t.gps_time DESC LIMIT $3
  ) j`;

/** For the devices given, the fixes stored as jumps since their newest unfiltered one, in time order. */
async function jumpsAfter(pool: Pool | PoolClient, newest: ReadonlyMap<string, Fix>, devices: Iterable<string>, most: number) {
  const since = [...new Set(devices)].flatMap((imei) => (newest.has(imei) ? [[imei, newest.get(imei)!.gpsTimeMs] as const] : []));
  const jumps = new Map<string, Fix[]>();
  if (since.length === 0 || most === 0) return jumps;
  const { rows } = await pool.query<{ imei: string; gps_time: Date; latitude: number; longitude: number }>(JUMPS_AFTER, [
    since.map(([imei]) => imei),
    since.map(([, ms]) => new Date(ms).toISOString()),
    most,
    new Date(Math.min(...since.map(([, ms]) => ms))).toISOString(),
  ]);
  for (const row of rows.reverse()) {
    let its = jumps.get(row.imei);
    if (!its) jumps.set(row.imei, (its = []));
    its.push({ gpsTimeMs: row.gps_time.getTime(), latitude: row.latitude, longitude: row.longitude });
  }
  return jumps;
}

interface Row {
  id: string;
  imei: string;
  gps_time: Date;
  filtered: FilterReason | null;
  /** Only in SELECT_EXISTING's rows. */
  received_at?: Date;
}

/** The devices' newest fixes: those `remembered` holds, the others read from PostgreSQL. */
async function newestFixes(pool: Pool | PoolClient, imeis: string[], remembered: NewestFixes | undefined): Promise<Map<string, Fix>> {
  const devices = [...new Set(imeis)];
  const newest = remembered?.of(devices) ?? new Map<string, Fix>();
  const unknown = devices.filter((imei) => !newest.has(imei));
  if (unknown.length === 0) return newest;
  const result = await pool.query<{ imei: string; gps_time: Date; latitude: number; longitude: number }>(NEWEST_FIXES, [unknown]);
  for (const row of result.rows) {
    newest.set(row.imei, { gpsTimeMs: row.gps_time.getTime(), latitude: row.latitude, longitude: row.longitude });
  }
  return newest;
}

/**
 * Each device's newest fix once the batch is stored, as device_last_locations now holds it: the newest
 * before, moved forward by the positions this batch inserted unfiltered (a duplicate was stored before,
 * as filtered or not as it was then).
 */
function newestAfter(
  ordered: TripLocationCommand[],
  reasons: Array<FilterReason | null>,
  inserted: ReadonlySet<string>,
  before: ReadonlyMap<string, Fix>,
): Map<string, Fix> {
  const newest = new Map(before);
  ordered.forEach((trip, index) => {
    const fix = fixOf(trip);
    if (reasons[index] !== null || !inserted.has(keyOf(trip.imei, fix.gpsTimeMs))) return;
    if (isNewer(fix, newest.get(trip.imei))) newest.set(trip.imei, fix);
  });
  return newest;
}

const keyOf = (imei: string, gpsTime: number) => `${gpsTime}|${imei}`;

function column<T>(trips: TripLocationCommand[], pick: (trip: TripLocationCommand) => T | undefined): Array<T | null> {
  return trips.map((trip) => pick(trip) ?? null);
}

/**
 * Orders a batch by device, then time, stably (the first of two commands for one position stays first
 * and is the one stored). Batches that overlap, as after a rebalance or a redelivery, then wait for each
 * other's positions in one order, never in a cycle. gpsTime is the command's fixed-width UTC form, so
 * its text sorts as its time does.
 */
export function inLockOrder(trips: readonly TripLocationCommand[]): TripLocationCommand[] {
  return [...trips].sort((a, b) =>
    a.imei === b.imei ? (a.gpsTime < b.gpsTime ? -1 : a.gpsTime > b.gpsTime ? 1 : 0) : a.imei < b.imei ? -1 : 1,
  );
}

/**
 * Stores the trips, each marked filtered or not by `filters`, and answers one row per trip, in order.
 * `remembered`: the devices' newest fixes as this writer knows them, asked of PostgreSQL only for the
 * others, and moved forward by what the batch stored.
 */
export async function storeTripLocations(
  pool: Pool | PoolClient,
  trips: TripLocationCommand[],
  filters: FilterSettings = DEFAULT_FILTERS,
  remembered?: NewestFixes,
): Promise<TripLocationRow[]> {
  const ordered = inLockOrder(trips);
  const devices = ordered.map((t) => t.imei);
  const measured = filters.maxSpeedKmh > 0;
  const mark = remembered?.mark();
  const newest = measured ? await newestFixes(pool, devices, remembered) : new Map<string, Fix>();
  let stored: StoredBatch;
  try {
    stored = await storeOrdered(pool, ordered, devices, filters, newest);
  } catch (error) {
    // Committed or not, what PostgreSQL holds for these devices now is not known.
    remembered?.forget(devices);
    throw error;
  }
  const { reasons, ids, inserted } = stored;
  if (measured && remembered && mark !== undefined) remembered.remember(newestAfter(ordered, reasons, inserted, newest), mark);

  const unanswered = new Set(inserted);
  const redelivered = new Set<string>();
  return trips.map((trip) => {
    const key = keyOf(trip.imei, Date.parse(trip.gpsTime));
    const row = ids.get(key);
    if (row === undefined) throw new Error(`trip location ${key} was neither inserted nor found`);
    // The first command of a key in this batch is the one that created the row.
    const duplicate = !unanswered.delete(key);
    const again = row.receivedAtMs === Date.parse(trip.receivedAt) && !redelivered.has(key);
    if (again) redelivered.add(key);
    return { id: row.id, filtered: row.filtered, duplicate, redelivered: again };
  });
}

interface StoredRow {
  id: number;
  filtered: FilterReason | null;
  /** The stored row's received_at, for a position stored before this batch. */
  receivedAtMs?: number;
}

interface StoredBatch {
  /** Why each of the ordered trips is filtered, or null. */
  reasons: Array<FilterReason | null>;
  /** The row of each position of the batch, by key; with its receipt time when it was stored before. */
  ids: Map<string, StoredRow>;
  /** The keys of the positions this batch inserted (the others were stored before). */
  inserted: Set<string>;
}

/** Stores the trips in lock order; `devices` are their IMEIs, in that order. */
async function storeOrdered(
  pool: Pool | PoolClient,
  ordered: TripLocationCommand[],
  devices: string[],
  filters: FilterSettings,
  newest: ReadonlyMap<string, Fix>,
): Promise<StoredBatch> {
  let reasons = filterReasons(ordered, newest, filters);
  // A jump may end a new track: the jumps stored before it are read, only for a batch that has one.
  const jumped = ordered.filter((_, index) => reasons[index] === 'jump').map((trip) => trip.imei);
  if (jumped.length > 0 && filters.jumpConfirmations > 1) {
    reasons = filterReasons(ordered, newest, filters, await jumpsAfter(pool, newest, jumped, filters.jumpConfirmations - 1));
  }
  const inserted = await pool.query<Row>({
    // Only a batch with a filtered position joins device_last_locations (the heard part), and a generic
    // plan made on a near-empty table joins it by a sequential scan: such a batch is planned for itself.
    ...(reasons.some((reason) => reason !== null) ? {} : { name: 'trip-insert-batch' }),
    text: INSERT_BATCH,
    values: [
      devices,
      column(ordered, (t) => t.gpsTime),
      column(ordered, (t) => t.latitude),
      column(ordered, (t) => t.longitude),
      column(ordered, (t) => t.speed),
      column(ordered, (t) => t.ignition),
      column(ordered, (t) => t.angle),
      column(ordered, (t) => t.satellite),
      column(ordered, (t) => t.door1),
      column(ordered, (t) => t.door2),
      column(ordered, (t) => t.temp),
      column(ordered, (t) => t.fuel_percentage),
      column(ordered, (t) => t.receivedAt),
      // pg writes a JS array of objects as a PostgreSQL array literal of their JSON texts.
      column(ordered, (t) => (t.attributes === undefined ? undefined : JSON.stringify(t.attributes))),
      reasons,
    ],
  });

  const ids = new Map<string, StoredRow>();
  const fresh = new Set<string>();
  for (const row of inserted.rows) {
    const key = keyOf(row.imei, row.gps_time.getTime());
    ids.set(key, { id: Number(row.id), filtered: row.filtered });
    fresh.add(key);
  }
  if (inserted.rows.length < ordered.length) {
    // Only the positions this statement did not insert are looked up.
    const earlier = ordered.filter((trip) => !fresh.has(keyOf(trip.imei, Date.parse(trip.gpsTime))));
    const existing = await pool.query<Row>(SELECT_EXISTING, [earlier.map((t) => t.imei), earlier.map((t) => t.gpsTime)]);
    for (const row of existing.rows) {
      const key = keyOf(row.imei, row.gps_time.getTime());
      if (!ids.has(key)) ids.set(key, { id: Number(row.id), filtered: row.filtered, receivedAtMs: row.received_at?.getTime() });
    }
  }

  return { reasons, ids, inserted: fresh };
}

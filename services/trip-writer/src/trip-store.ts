// SQL for trip locations. A batch is written with one INSERT over unnest()ed arrays; positions that
// already exist (same imei and gps_time) are left as they are and answered with their existing row.
import type { Pool } from 'pg';
import type { TripLocationCommand } from '@fleet/shared';

/** The row a trip location command came to. */
export interface TripLocationRow {
  id: number;
  /** True when the row existed before this command (a retry or a redelivery). */
  duplicate: boolean;
}

const INSERT_BATCH = `
  INSERT INTO trip_locations
    (imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at)
  SELECT * FROM unnest(
    $1::text[], $2::timestamptz[], $3::float8[], $4::float8[], $5::float8[], $6::bool[], $7::float8[],
    $8::int[], $9::bool[], $10::bool[], $11::float8[], $12::float8[], $13::timestamptz[])
  ON CONFLICT (imei, gps_time) DO NOTHING
  RETURNING id, imei, gps_time`;

const SELECT_EXISTING = `
  SELECT t.id, t.imei, t.gps_time
  FROM trip_locations t
  JOIN unnest($1::text[], $2::timestamptz[]) AS k(imei, gps_time) ON t.imei = k.imei AND t.gps_time = k.gps_time`;

interface Row {
  id: string;
  imei: string;
  gps_time: Date;
}

const keyOf = (imei: string, gpsTime: number) => `${gpsTime}|${imei}`;

function column<T>(trips: TripLocationCommand[], pick: (trip: TripLocationCommand) => T | undefined): Array<T | null> {
  return trips.map((trip) => pick(trip) ?? null);
}

/** Stores the trips and answers one row per trip, in order. */
export async function storeTripLocations(pool: Pool, trips: TripLocationCommand[]): Promise<TripLocationRow[]> {
  const imeis = column(trips, (t) => t.imei);
  const gpsTimes = column(trips, (t) => t.gpsTime);
  const inserted = await pool.query<Row>(INSERT_BATCH, [
    imeis,
    gpsTimes,
    column(trips, (t) => t.latitude),
    column(trips, (t) => t.longitude),
    column(trips, (t) => t.speed),
    column(trips, (t) => t.ignition),
    column(trips, (t) => t.angle),
    column(trips, (t) => t.satellite),
    column(trips, (t) => t.door1),
    column(trips, (t) => t.door2),
    column(trips, (t) => t.temp),
    column(trips, (t) => t.fuel_percentage),
    column(trips, (t) => t.receivedAt),
  ]);

  const ids = new Map<string, number>();
  const fresh = new Set<string>();
  for (const row of inserted.rows) {
    const key = keyOf(row.imei, row.gps_time.getTime());
    ids.set(key, Number(row.id));
    fresh.add(key);
  }
  if (inserted.rows.length < trips.length) {
    const existing = await pool.query<Row>(SELECT_EXISTING, [imeis, gpsTimes]);
    for (const row of existing.rows) {
      const key = keyOf(row.imei, row.gps_time.getTime());
      if (!ids.has(key)) ids.set(key, Number(row.id));
    }
  }

  return trips.map((trip) => {
    const key = keyOf(trip.imei, Date.parse(trip.gpsTime));
    const id = ids.get(key);
    if (id === undefined) throw new Error(`trip location ${key} was neither inserted nor found`);
    // The first command of a key in this batch is the one that created the row.
    const duplicate = !fresh.delete(key);
    return { id, duplicate };
  });
}

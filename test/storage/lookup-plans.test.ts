// A fleet that grows after the trip-writer connected: storing a batch must look its devices up, not read
// every device's row. Named statements keep the plan PostgreSQL settled on while the table was nearly
// empty (a sequential scan) for as long as the table goes unanalyzed: the newest-fix lookup did so on
// every batch, the statement's heard part on every batch with a filtered position.
import type { PoolClient } from 'pg';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { createPartition, dayOf } from '../../services/trip-writer/src/trip-partitions';
import { storeTripLocations } from '../../services/trip-writer/src/trip-store';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

const GROWN_FLEET = 20_000;
const START = Date.now() - 3_600_000;

let database: PrivateDatabase;
let client: PoolClient;

beforeAll(async () => {
  database = await privateDatabase('lookup-plans');
  client = await database.pool.connect();
  // The batches' days: an hour ago, and today when that hour crosses midnight.
  for (const at of [START, Date.now()]) await createPartition(client, dayOf(new Date(at))!);
});
afterAll(async () => {
  client?.release();
  await database?.drop();
});

let clock = START;
function batch(imeis: string[], place = { latitude: -6.2, longitude: 106.8 }): TripLocationCommand[] {
  clock += 1000;
  const gpsTime = new Date(clock).toISOString();
  return imeis.map((imei) => ({ imei, gpsTime, ...place, speed: 40, ignition: true, receivedAt: new Date().toISOString() }));
}

const early = Array.from({ length: 10 }, (_, i) => `early-${i}`);
const grown = (from: number) => Array.from({ length: 5 }, (_, i) => `grown-${from + i}`);

// This backend's counters not yet reported to the server, earlier transactions' included: read as a difference.
async function rowsReadBySequentialScans(): Promise<number> {
  const { rows } = await client.query<{ read: string }>(
    `SELECT seq_tup_read AS read FROM pg_stat_xact_user_tables WHERE relname = 'device_last_locations'`,
  );
  return Number(rows[0]!.read);
}

/** Stores the batch in a transaction rolled back, and answers the rows and how many device rows sequential scans read. */
async function storeCounting(trips: TripLocationCommand[]) {
  await client.query('BEGIN');
  try {
    const before = await rowsReadBySequentialScans();
    const stored = await storeTripLocations(client, trips);
    return { stored, read: (await rowsReadBySequentialScans()) - before };
  } finally {
    await client.query('ROLLBACK');
  }
}

describe('a fleet grown after the writer connected', () => {
  beforeAll(async () => {
    // More than the five runs after which PostgreSQL may settle on a generic plan, on a near-empty table.
    for (let run = 0; run < 8; run += 1) await storeTripLocations(client, batch(early));
    // Then thousands of devices, each last seen where the batches below are, a day before them.
    await client.query(
      `INSERT INTO device_last_locations (imei, trip_location_id, gps_time, latitude, longitude, speed, ignition, received_at, last_seen_at)
       SELECT 'grown-' || n, n, now() - interval '1 day', -6.2, 106.8, 0, true, now(), now() FROM generate_series(1, $1::int) AS n`,
      [GROWN_FLEET],
    );
  });

  test('a batch of ten devices reads a handful of rows of device_last_locations, not every device', async () => {
    const { stored, read } = await storeCounting(batch([...early.slice(0, 5), ...grown(1)]));
    expect(stored.map((row) => [row.duplicate, row.filtered])).toEqual(Array(10).fill([false, null]));
    expect(read).toBeLessThan(GROWN_FLEET / 100);
  });

  test('so does a batch where devices sent only filtered positions', async () => {
    const { stored, read } = await storeCounting([...batch(early.slice(0, 5)), ...batch(grown(6), { latitude: 0, longitude: 0 })]);
    expect(stored.map((row) => row.filtered)).toEqual([...Array(5).fill(null), ...Array(5).fill('zero')]);
    expect(read).toBeLessThan(GROWN_FLEET / 100);
  });
});

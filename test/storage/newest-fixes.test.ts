// The trip-writer remembers each device's newest fix fit to use, and asks PostgreSQL only for the devices
// it has not seen: a device reporting again costs its batch one statement, not two. What it remembers
// must stay what PostgreSQL holds: forgotten when the group moves partitions (another writer may have
// stored the device's fixes since) and when a batch fails (committed or not is not known).
import type { PoolClient, QueryConfig } from 'pg';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { NewestFixes } from '../../services/trip-writer/src/newest-fixes';
import { createPartition, dayOf } from '../../services/trip-writer/src/trip-partitions';
import { storeTripLocations } from '../../services/trip-writer/src/trip-store';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

const START = Date.now() - 3 * 3_600_000;
const FILTERS = { maxSpeedKmh: 1000, maxAccuracyMeters: 0, maxHdop: 0, jumpConfirmations: 3, maxAheadMs: 300_000 };
const HERE = { latitude: -6.2, longitude: 106.8 };
/** About 111 km north of HERE. */
const AWAY = { latitude: -5.2, longitude: 106.8 };

let database: PrivateDatabase;
let client: PoolClient;
const sent: string[] = [];
/** The client, noting the text of each statement sent through it. */
let noting: PoolClient;

beforeAll(async () => {
  database = await privateDatabase('newest-fixes');
  client = await database.pool.connect();
  for (const at of [START, Date.now()]) await createPartition(client, dayOf(new Date(at))!);
  noting = {
    query: (statement: string | QueryConfig, values?: unknown[]) => {
      sent.push(typeof statement === 'string' ? statement : statement.text);
      return client.query(statement, values);
    },
  } as unknown as PoolClient;
});
afterAll(async () => {
  client?.release();
  await database?.drop();
});

let device = 0;
const newDevice = () => `newest-fixes-${process.pid}-${(device += 1)}`;

function trip(imei: string, secondsAfterStart: number, place: { latitude: number; longitude: number }): TripLocationCommand {
  return {
    imei,
    gpsTime: new Date(START + secondsAfterStart * 1000).toISOString(),
    ...place,
    speed: 40,
    ignition: true,
    receivedAt: new Date().toISOString(),
  };
}

/** Stores the batch through `noting` and answers each position's filter reason and how many newest-fix lookups it sent. */
async function store(trips: TripLocationCommand[], remembered?: NewestFixes) {
  const before = sent.length;
  const rows = await storeTripLocations(noting, trips, FILTERS, remembered);
  const lookups = sent.slice(before).filter((text) => text.includes('FROM device_last_locations WHERE imei = ANY')).length;
  return { filtered: rows.map((row) => row.filtered), lookups };
}

test('a device seen before is measured from the fix the writer remembers, without a lookup', async () => {
  const remembered = new NewestFixes();
  const imei = newDevice();
  expect(await store([trip(imei, 0, HERE)], remembered)).toEqual({ filtered: [null], lookups: 1 });
  // A minute later and 111 km away: a jump, measured from the remembered fix.
  expect(await store([trip(imei, 60, AWAY)], remembered)).toEqual({ filtered: ['jump'], lookups: 0 });
  // Two minutes after the first, beside it: measured from it still, since the jump did not replace it.
  expect(await store([trip(imei, 120, { latitude: -6.201, longitude: 106.8 })], remembered)).toEqual({ filtered: [null], lookups: 0 });
  // A device of the batch not seen before is looked up, alone.
  const other = newDevice();
  expect(await store([trip(imei, 180, HERE), trip(other, 180, HERE)], remembered)).toEqual({ filtered: [null, null], lookups: 1 });
});

test('after the group gives the writer its partitions again, a device is looked up and measured from what another writer stored meanwhile', async () => {
  const remembered = new NewestFixes();
  const imei = newDevice();
  await store([trip(imei, 0, HERE)], remembered);
  // Another writer, while the device's partition was its own: two hours later, 111 km away (55 km/h).
  expect((await store([trip(imei, 7200, AWAY)])).filtered).toEqual([null]);
  remembered.forgetAll();
  // A minute after that, back where it started: 111 km in a minute from the fix PostgreSQL holds.
  expect(await store([trip(imei, 7260, HERE)], remembered)).toEqual({ filtered: ['jump'], lookups: 1 });
});

test('a batch that fails makes the writer forget its devices: the next batch looks them up', async () => {
  const remembered = new NewestFixes();
  const imei = newDevice();
  await store([trip(imei, 0, HERE)], remembered);
  // A day with no partition: PostgreSQL refuses the batch.
  await expect(store([trip(imei, -40 * 86_400, HERE)], remembered)).rejects.toThrow();
  expect(await store([trip(imei, 60, HERE)], remembered)).toEqual({ filtered: [null], lookups: 1 });
});

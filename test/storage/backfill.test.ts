// Old positions and the write path: MAX_PAST_AGE and the retention bound the past a position may come
// from; a backfill spanning a year of days is stored without stalling other devices; the writer's
// statements touch only the partitions of their own rows; and a batch the database fails for good stops
// holding its partition (stored command by command, a command that fails alone set aside).
import { Pool } from 'pg';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { createPartition } from '../../services/trip-writer/src/trip-partitions';
import { storeTripLocations } from '../../services/trip-writer/src/trip-store';
import { closeKafka, readTopic } from '../support/kafka';
import { buildTrip, closeDb, db, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';
import { scrape } from '../support/scrape';
import { TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const SINGLE_PATH = TRIP_LOCATION_PATH;
const BATCH_PATH = TRIP_LOCATION_BATCH_PATH;
const DAY_MS = 86_400_000;
/** A backfill of this many days makes about as many partitions as a year's retention keeps. */
const BACKFILL_DAYS = 400;

let auth: { authorization: string };

beforeAll(async () => {
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await closeKafka();
  await closeDb();
});

/** A position of `imei` at noon, `age` days ago. */
const daysAgo = (imei: string, age: number) => buildTrip({ imei, gpsTime: new Date(Date.now() - age * DAY_MS).toISOString() });

async function storedIds(pool: Pool, imei: string): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>('SELECT id::int AS id FROM trip_locations WHERE imei = $1 ORDER BY gps_time', [imei]);
  return rows.map((row) => row.id);
}

describe('the past a position may come from', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ mode: 'in-process', label: 'past-age', env: { MAX_PAST_AGE: '30d' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('a position older than MAX_PAST_AGE is refused with 400 naming gpsTime, and nothing is stored', async () => {
    const trip = daysAgo(uniqueImei(), 31);
    const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'E-V1/1-01',
      message: 'The request body is invalid',
      detail: "gpsTime: Must be at most 30 days before the server's clock",
      issues: [{ path: 'gpsTime', code: 'too_small', message: "Must be at most 30 days before the server's clock" }],
    });
    expect(await storedIds(db(), String(trip.imei))).toEqual([]);
  });

  test('in a batch, a position older than MAX_PAST_AGE is refused as its item, and the others are stored', async () => {
    const imei = uniqueImei();
    const [recent, old] = [daysAgo(imei, 29), daysAgo(imei, 400)];
    const res = await postJson(`${stack.url}${BATCH_PATH}`, [old, recent], auth);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      accepted: 1,
      rejected: 1,
      items: [
        {
          index: 0,
          error: expect.objectContaining({ code: 'E-V1/1-01', detail: "gpsTime: Must be at most 30 days before the server's clock" }),
        },
        { index: 1, id: expect.any(Number) },
      ],
    });
    expect(await storedIds(db(), imei)).toEqual([res.body.data.items[1].id]);
  });
});

test('with TRIP_RETENTION_DAYS set, a position already past the retention is refused with 400 naming gpsTime', async () => {
  // A database of its own: the trip-writer's retention drops the older days of the database it writes to.
  const database = await privateDatabase('retention');
  const stack = await startStack({
    mode: 'in-process',
    label: 'past-retention',
    env: { DATABASE_URL: database.url, TRIP_RETENTION_DAYS: '10' },
  });
  try {
    const trip = daysAgo(uniqueImei(), 11);
    const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('gpsTime: Must be within the 10-day retention of positions');
    expect(await storedIds(database.pool, String(trip.imei))).toEqual([]);
    expect((await postJson(`${stack.url}${SINGLE_PATH}`, daysAgo(uniqueImei(), 9), auth)).status).toBe(200);
  } finally {
    await stack.stop();
    await database.drop();
  }
});

describe(`with ${BACKFILL_DAYS} daily partitions`, () => {
  let database: PrivateDatabase;
  let stack: Stack;
  const device = uniqueImei();
  const backfill = Array.from({ length: BACKFILL_DAYS }, (_, age) => daysAgo(device, age + 1));
  let firstIds: number[];

  beforeAll(async () => {
    database = await privateDatabase('backfill');
    // Creating 400 partitions is 400 tables, their indexes and 400 attachments: on a loaded 2-core CI
    // machine that took longer than the default 10 s a write waits for its reply, and the first backfill
    // was answered 503 (stored all the same). What this suite asks is that it is stored and that nobody
    // else waits behind it, so the backfill may wait as long as its DDL takes.
    stack = await startStack({
      mode: 'in-process',
      label: 'backfill',
      env: { DATABASE_URL: database.url, MAX_PAST_AGE: `${BACKFILL_DAYS + 2}d`, REPLY_TIMEOUT_MS: '30000' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await database?.drop();
  });

  test('a backfill of one device spanning every day is stored, and other devices posting meanwhile are all answered 200', async () => {
    const others = Array.from({ length: 20 }, () => buildTrip());
    const [batch, ...singles] = await Promise.all([
      postJson(`${stack.url}${BATCH_PATH}`, backfill, auth),
      ...others.map((trip) => postJson(`${stack.url}${SINGLE_PATH}`, trip, auth)),
    ]);
    expect(batch!.status).toBe(200);
    expect(batch!.body.data.accepted).toBe(BACKFILL_DAYS);
    expect(singles.map((res) => res.status)).toEqual(others.map(() => 200));
    firstIds = batch!.body.data.items.map((item: { id: number }) => item.id);
    expect(await storedIds(database.pool, device)).toEqual([...firstIds].reverse());
    const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'trip_locations'::regclass`);
    expect(rows[0].n).toBeGreaterThanOrEqual(BACKFILL_DAYS);
  });

  test('the same backfill sent again is answered with the ids it was stored under, and stored once', async () => {
    const again = await postJson(`${stack.url}${BATCH_PATH}`, backfill, auth);
    expect(again.status).toBe(200);
    expect(again.body.data.items.map((item: { id: number }) => item.id)).toEqual(firstIds);
    expect(await storedIds(database.pool, device)).toHaveLength(BACKFILL_DAYS);
  });

  test('storing a position that exists already locks only the partition of its day, not every partition', async () => {
    const client = await database.pool.connect();
    try {
      await client.query('BEGIN');
      const [stored] = await storeTripLocations(client, [
        { ...(backfill[0] as unknown as TripLocationCommand), receivedAt: new Date().toISOString() },
      ]);
      expect(stored).toEqual({ id: firstIds[0], duplicate: true, redelivered: false, filtered: null });
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'`);
      // trip_locations, one partition, their indexes, device_last_locations and its index: a handful.
      expect(rows[0].n).toBeLessThan(20);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  test('a partition is created while inserts hold trip_locations, without waiting for them', async () => {
    const inserting = await database.pool.connect();
    try {
      await inserting.query('BEGIN');
      // The lock every INSERT into trip_locations holds until it commits.
      await inserting.query('LOCK TABLE trip_locations IN ROW EXCLUSIVE MODE');
      const creating = await database.pool.connect();
      try {
        // Without this, a creation that waits for the insert would give up only after the DDL's own 5 s.
        await creating.query("SET lock_timeout = '1s'");
        await expect(
          createPartition(creating, new Date(Date.now() - (BACKFILL_DAYS + 1) * DAY_MS).toISOString().slice(0, 10)),
        ).resolves.toBe(true);
      } finally {
        creating.release();
      }
    } finally {
      await inserting.query('ROLLBACK');
      inserting.release();
    }
  });
});

describe('a batch the database fails for good', () => {
  let database: PrivateDatabase;
  let stack: Stack;
  const poisoned = uniqueImei();

  beforeAll(async () => {
    database = await privateDatabase('poison');
    // A fault of the database itself, injected with a trigger: a statement storing positions of more than
    // three days fails as one holding too many partition locks does, and any statement storing a position
    // of the poisoned device fails the same way.
    await database.pool.query(`
      CREATE FUNCTION fail_like_lock_exhaustion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (SELECT count(DISTINCT (gps_time AT TIME ZONE 'UTC')::date) FROM stored) > 3
           OR EXISTS (SELECT 1 FROM stored WHERE imei = '${poisoned}') THEN
          RAISE EXCEPTION 'out of shared memory' USING ERRCODE = '53200', HINT = 'You might need to increase max_locks_per_transaction.';
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER fail_like_lock_exhaustion AFTER INSERT ON trip_locations
        REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION fail_like_lock_exhaustion();`);
    stack = await startStack({ mode: 'in-process', label: 'poison-batch', env: { DATABASE_URL: database.url } });
  });
  afterAll(async () => {
    await stack?.stop();
    await database?.drop();
  });

  test('a batch failing together is stored command by command, and another device posting meanwhile is answered 200', async () => {
    const device = uniqueImei();
    const week = Array.from({ length: 7 }, (_, age) => daysAgo(device, age + 1));
    const other = buildTrip();
    const [batch, single] = await Promise.all([
      postJson(`${stack.url}${BATCH_PATH}`, week, auth),
      postJson(`${stack.url}${SINGLE_PATH}`, other, auth),
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.data.accepted).toBe(7);
    expect(single.status).toBe(200);
    expect(await storedIds(database.pool, device)).toHaveLength(7);
    expect(await storedIds(database.pool, String(other.imei))).toEqual([single.body.data.id]);
    const metrics = await scrape(`http://127.0.0.1:${stack.tripWriters[0]!.metricsPort}/metrics`);
    // What the FleetPostgresUnavailable alert watches: the writer says its stores were failing.
    expect(metrics.value('fleet_writer_store_failures_total')).toBeGreaterThanOrEqual(3);
  });

  test('a position that fails even alone is answered 500, set aside on the dead-letter topic, and the rest is stored', async () => {
    const fine = buildTrip();
    const poison = buildTrip({ imei: poisoned });
    const res = await postJson(`${stack.url}${BATCH_PATH}`, [fine, poison], auth);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      accepted: 1,
      rejected: 1,
      items: [
        { index: 0, id: expect.any(Number) },
        {
          index: 1,
          error: {
            code: 'E-S1/1-00',
            message: 'Internal server error',
            detail: 'this request could not be stored and was set aside for an operator',
          },
        },
      ],
    });
    expect(await storedIds(database.pool, String(fine.imei))).toEqual([res.body.data.items[0].id]);
    expect(await storedIds(database.pool, poisoned)).toEqual([]);
    const letters = await readTopic(`${stack.prefix}.dead-letter`, 1, 20_000);
    expect(letters).toHaveLength(1);
    expect(letters[0]!.headers['dead-letter-reason']).toMatch(/failed alone as in its batch: out of shared memory$/);
    expect(letters[0]!.value).toContain(poisoned);
  });
});

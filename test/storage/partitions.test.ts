// trip_locations partitioned by day of gps_time: partitions created ahead by the trip-writer and on
// demand for positions outside them, MAX_FUTURE_SKEW refusing positions from too far ahead, retention
// dropping whole expired partitions, and the migration that partitioned a table already holding rows.
import { runner } from 'node-pg-migrate';
import type { Pool } from 'pg';
import { createPool } from '@fleet/shared/db/pool';
import { Registry } from 'prom-client';
import { migrate, migrationsDir } from '@fleet/shared/db/migrate';
import { createLogger } from '@fleet/shared/logger';
import { createPartitionGuard } from '../../services/trip-writer/src/partition-guard';
import { maintainPartitions } from '../../services/trip-writer/src/partition-maintenance';
import { createPartition, partitionName } from '../../services/trip-writer/src/trip-partitions';
import { createPartitionMetrics } from '../../services/trip-writer/src/partition-metrics';
import { closeKafka } from '../support/kafka';
import { baseEnv, buildTrip, closeDb, db, postJson, provisionedPrefix, signToken, startWriter, type Stack } from '../support/harness';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';
import { eventually } from '../support/eventually';
import { scrape } from '../support/scrape';
import { TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const SINGLE_PATH = TRIP_LOCATION_PATH;
const BATCH_PATH = TRIP_LOCATION_BATCH_PATH;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const partitionOf = (ms: number) => `trip_locations_p${dayOf(ms).replaceAll('-', '')}`;

async function partitions(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'trip_locations'::regclass ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

async function tableExists(pool: Pool, name: string): Promise<boolean> {
  return ((await pool.query('SELECT 1 FROM pg_class WHERE relname = $1', [name])).rowCount ?? 0) > 0;
}

/** The partition a stored position is in, and its id. */
async function storedIn(imei: string): Promise<Array<{ id: number; partition: string; gps_time: Date }>> {
  const { rows } = await db().query(
    'SELECT id::int AS id, tableoid::regclass::text AS partition, gps_time FROM trip_locations WHERE imei = $1 ORDER BY gps_time',
    [imei],
  );
  return rows;
}

// Every describe below provisions topics through the file's one Kafka admin.
afterAll(() => closeKafka());

describe('on the partitioned table, through the running stack', () => {
  let stack: Stack;
  let auth: { authorization: string };

  beforeAll(async () => {
    // Days in 1990 and 1991 are days no other test writes to: the past is opened that far.
    stack = await startStack({ mode: 'in-process', label: 'partitions', env: { MAX_PAST_AGE: '50y' } });
    auth = { authorization: `Bearer ${await signToken()}` };
  });
  afterAll(async () => {
    await stack?.stop();
    await closeDb();
  });

  test('once the trip-writer has started, the partitions of today and the 7 days ahead exist', async () => {
    const existing = await partitions(db());
    const expected = Array.from({ length: 8 }, (_, ahead) => partitionOf(Date.now() + ahead * DAY_MS));
    expect(existing).toEqual(expect.arrayContaining(expected));
  });

  test('a position 10 days old and one 20 hours ahead are stored, each in the partition of its day', async () => {
    const old = buildTrip({ gpsTime: new Date(Date.now() - 10 * DAY_MS).toISOString() });
    const ahead = buildTrip({ gpsTime: new Date(Date.now() + 20 * HOUR_MS).toISOString() });
    for (const trip of [old, ahead]) {
      const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);
      expect(res.status).toBe(200);
      const rows = await storedIn(String(trip.imei));
      expect(rows).toEqual([
        { id: res.body.data.id, partition: partitionOf(Date.parse(String(trip.gpsTime))), gps_time: new Date(String(trip.gpsTime)) },
      ]);
    }
  });

  test('a position on a day that has no partition gets one created on demand, and is counted', async () => {
    // A day in 1990 that no other test writes to: its partition cannot exist yet.
    const gpsTime = Date.UTC(1990, 0, 1) + Math.floor(Math.random() * 365) * DAY_MS + 12 * HOUR_MS;
    const name = partitionOf(gpsTime);
    expect(await tableExists(db(), name)).toBe(false);
    const metrics = `http://127.0.0.1:${stack.tripWriters[0]!.metricsPort}/metrics`;
    const before = (await scrape(metrics)).value('fleet_trip_partitions_created_total', { reason: 'on-demand' });

    const trip = buildTrip({ gpsTime: new Date(gpsTime).toISOString() });
    const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);

    expect(res.status).toBe(200);
    expect(await partitions(db())).toContain(name);
    expect((await storedIn(String(trip.imei))).map((row) => row.partition)).toEqual([name]);
    expect((await scrape(metrics)).value('fleet_trip_partitions_created_total', { reason: 'on-demand' })).toBe(before + 1);
  });

  test('when a partition the writer created is dropped behind its back (another writer’s retention), the next position of that day is still stored', async () => {
    const gpsTime = Date.UTC(1991, 0, 1) + Math.floor(Math.random() * 365) * DAY_MS + 6 * HOUR_MS;
    const name = partitionOf(gpsTime);
    const first = await postJson(`${stack.url}${SINGLE_PATH}`, buildTrip({ gpsTime: new Date(gpsTime).toISOString() }), auth);
    expect(first.status).toBe(200);
    await db().query(`DROP TABLE ${name}`);

    const trip = buildTrip({ gpsTime: new Date(gpsTime + 1000).toISOString() });
    const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);

    expect(res.status).toBe(200);
    expect(await storedIn(String(trip.imei))).toEqual([{ id: res.body.data.id, partition: name, gps_time: new Date(gpsTime + 1000) }]);
  });

  test('a position further ahead than MAX_FUTURE_SKEW is refused with 400 naming gpsTime, and nothing is stored', async () => {
    const trip = buildTrip({ gpsTime: new Date(Date.now() + 25 * HOUR_MS).toISOString() });
    const res = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'E-V1/1-01',
      message: 'The request body is invalid',
      detail: "gpsTime: Must be at most 1 day ahead of the server's clock",
      issues: [{ path: 'gpsTime', code: 'too_big', message: "Must be at most 1 day ahead of the server's clock" }],
    });
    expect(await storedIn(String(trip.imei))).toEqual([]);
  });

  test('in a batch, a position beyond MAX_FUTURE_SKEW is refused as its item, as a single post is, and the others are stored', async () => {
    const future = buildTrip({ gpsTime: new Date(Date.now() + 3 * DAY_MS).toISOString() });
    const fine = [buildTrip(), buildTrip({ gpsTime: new Date(Date.now() + 23 * HOUR_MS).toISOString() })];
    const res = await postJson(`${stack.url}${BATCH_PATH}`, [fine[0], future, fine[1]], auth);
    const single = await postJson(`${stack.url}${SINGLE_PATH}`, future, auth);

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      accepted: 2,
      rejected: 1,
      items: [
        { index: 0, id: expect.any(Number) },
        { index: 1, error: single.body },
        { index: 2, id: expect.any(Number) },
      ],
    });
    expect(single.status).toBe(400);
    expect(single.body.detail).toMatch(/^gpsTime: /);
    expect(await storedIn(String(future.imei))).toEqual([]);
    for (const [position, index] of [
      [fine[0]!, 0],
      [fine[1]!, 2],
    ] as const) {
      expect((await storedIn(String(position.imei))).map((row) => row.id)).toEqual([res.body.data.items[index].id]);
    }
  });

  test('the same imei and gpsTime posted again lands on the row it created, on an old day as on today', async () => {
    for (const gpsTime of [new Date(Date.now() - 9 * DAY_MS).toISOString(), new Date().toISOString()]) {
      const trip = buildTrip({ gpsTime });
      const first = await postJson(`${stack.url}${SINGLE_PATH}`, trip, auth);
      const again = await postJson(`${stack.url}${SINGLE_PATH}`, { ...trip, latitude: 10 }, auth);
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(again.body.data.id).toBe(first.body.data.id);
      expect(again.body.data.information).toMatch(/was already recorded$/);
      expect((await storedIn(String(trip.imei))).map((row) => row.id)).toEqual([first.body.data.id]);
    }
  });
});

describe('retention', () => {
  test('TRIP_RETENTION_DAYS drops, at the writer start, only the partitions whose whole day is past it, and counts them', async () => {
    const database = await privateDatabase('storage', { migrated: false });
    try {
      await migrate(database.url, createLogger('test-setup', 'warn'));
      const now = Date.now();
      // 40 and 31 days old are past a 30-day retention; 29 days old and today are not.
      const days = [40, 31, 29, 0].map((age) => now - age * DAY_MS);
      for (const [index, time] of days.entries()) {
        const day = dayOf(time);
        const next = dayOf(time + DAY_MS);
        await database.pool.query(
          `CREATE TABLE IF NOT EXISTS ${partitionOf(time)} PARTITION OF trip_locations FOR VALUES FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`,
        );
        await database.pool.query(
          `INSERT INTO trip_locations (imei, gps_time, latitude, longitude, speed, ignition) VALUES ($1, $2, 1, 1, 1, true)`,
          [`retention-${index}`, new Date(time).toISOString()],
        );
      }

      const prefix = await provisionedPrefix('retention');
      const writer = await startWriter('trip', baseEnv(prefix, { DATABASE_URL: database.url, TRIP_RETENTION_DAYS: '30' }));
      try {
        const existing = await partitions(database.pool);
        expect(existing).not.toContain(partitionOf(days[0]!));
        expect(existing).not.toContain(partitionOf(days[1]!));
        expect(existing).toEqual(expect.arrayContaining([partitionOf(days[2]!), partitionOf(days[3]!), partitionOf(now + 7 * DAY_MS)]));
        expect(await tableExists(database.pool, partitionOf(days[0]!))).toBe(false);
        const { rows } = await database.pool.query('SELECT imei FROM trip_locations ORDER BY imei');
        expect(rows.map((row) => row.imei)).toEqual(['retention-2', 'retention-3']);
        const metrics = await scrape(`http://127.0.0.1:${writer.metricsPort}/metrics`);
        expect(metrics.value('fleet_trip_partitions_dropped_total')).toBe(2);
      } finally {
        await writer.stop();
      }
    } finally {
      await database.drop();
    }
  });

  test('a run finding another writer holding the maintenance lock does nothing; the next one does the work', async () => {
    const database = await privateDatabase('storage', { migrated: false });
    const holder = await database.pool.connect();
    try {
      await migrate(database.url, createLogger('test-setup', 'warn'));
      const registry = new Registry();
      const logger = createLogger('trip-writer', 'silent');
      const metrics = createPartitionMetrics(registry, logger);
      const deps = { pool: database.pool, guard: createPartitionGuard(database.pool, metrics), metrics, logger };
      // Ten days ahead of a clock moved forward: partitions the migration did not create.
      const later = () => new Date(Date.now() + 20 * DAY_MS);
      const settings = { aheadDays: 7, retentionDays: undefined, intervalMs: 60_000 };

      await holder.query('SELECT pg_advisory_lock(7146210401)');
      expect(await maintainPartitions(settings, { ...deps, now: later })).toEqual({ ran: false, created: [], dropped: [] });
      expect(await tableExists(database.pool, partitionOf(later().getTime()))).toBe(false);

      await holder.query('SELECT pg_advisory_unlock(7146210401)');
      const run = await maintainPartitions(settings, { ...deps, now: later });
      expect(run.ran).toBe(true);
      expect(run.created).toHaveLength(8);
      expect(await partitions(database.pool)).toEqual(
        expect.arrayContaining(Array.from({ length: 8 }, (_, ahead) => partitionOf(later().getTime() + ahead * DAY_MS))),
      );
    } finally {
      holder.release();
      await database.drop();
    }
  });
});

describe('a connection the server ends while a partition is being made', () => {
  // The writer checks a connection out of its pool to make a partition. The pool no longer listens to
  // a connection it handed out, so a terminate landing then once ended the whole trip-writer.
  const applicationName = 'fleet-trip-writer-partitions';
  let database: PrivateDatabase;
  let writerPool: Pool;

  beforeAll(async () => {
    database = await privateDatabase('storage');
    writerPool = createPool({ connectionString: database.url, max: 2, applicationName });
  });
  afterAll(async () => {
    await writerPool?.end();
    await database?.drop();
  });

  /**
   * Runs `work` while another transaction holds a table named as `day`'s partition, uncommitted, so the
   * writer's CREATE TABLE waits on it (up to its 5 s lock timeout); terminates the writer's connection
   * once it waits, as an administrator or a failover would; expects `work` to fail with the server's
   * error; then lets the name go.
   */
  async function expectFailureWhenTerminated(day: string, work: () => Promise<unknown>): Promise<void> {
    const blocker = await database.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`CREATE TABLE ${partitionName(day)} (id int)`);
      // Expected from the start, so that its failure is handled whenever it comes.
      const failing = expect(work()).rejects.toThrow('terminating connection due to administrator command');
      await eventually(
        async () => {
          const { rows } = await database.pool.query<{ ended: boolean }>(
            `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
             WHERE application_name = $1 AND datname = current_database() AND wait_event_type = 'Lock'`,
            [applicationName],
          );
          return rows.some((row) => row.ended);
        },
        5000,
        { what: "the writer's connection to wait for the lock" },
      );
      await failing;
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
  }

  test("a partition made on demand fails with the server's error, the process carries on, and the next try makes it", async () => {
    const day = '1985-03-01';
    await expectFailureWhenTerminated(day, () => createPartition(writerPool, day));
    expect(await createPartition(writerPool, day)).toBe(true);
    expect(await partitions(database.pool)).toContain('trip_locations_p19850301');
  });

  test('a maintenance run fails, its lock goes with its connection, and the next run does the work', async () => {
    const registry = new Registry();
    const logger = createLogger('trip-writer', 'silent');
    const metrics = createPartitionMetrics(registry, logger);
    const deps = {
      pool: writerPool,
      guard: createPartitionGuard(writerPool, metrics),
      metrics,
      logger,
      now: () => new Date('1986-06-01T12:00:00Z'),
    };
    const settings = { aheadDays: 2, retentionDays: undefined, intervalMs: 60_000 };
    await expectFailureWhenTerminated('1986-06-02', () => maintainPartitions(settings, deps));
    const run = await maintainPartitions(settings, deps);
    expect(run).toEqual({ ran: true, created: ['1986-06-02', '1986-06-03'], dropped: [] });
    expect(await partitions(database.pool)).toEqual(
      expect.arrayContaining(['trip_locations_p19860601', 'trip_locations_p19860602', 'trip_locations_p19860603']),
    );
  });
});

describe('the migration that partitions trip_locations', () => {
  test('on a database holding rows, keeps every row with its id, and the next insert gets a larger id', async () => {
    const database = await privateDatabase('storage', { migrated: false });
    try {
      // The schema as it was before partitioning: the first migration only.
      await runner({
        databaseUrl: database.url,
        dir: migrationsDir,
        direction: 'up',
        count: 1,
        migrationsTable: 'pgmigrations',
        log: () => undefined,
      });
      const times = ['2025-03-01T23:59:59.999Z', '2025-03-02T00:00:00.000Z', '2026-11-20T10:00:00.000Z', '1999-12-31T12:00:00.000Z'];
      for (const [index, time] of times.entries()) {
        await database.pool.query(
          `INSERT INTO trip_locations (imei, gps_time, latitude, longitude, speed, ignition, angle, temp)
           VALUES ($1, $2, $3, 106.8, $4, true, 90, NULL)`,
          [`migrated-${index}`, time, -6 - index / 10, index * 10],
        );
      }
      // An id handed out and never stored (a rolled-back insert) is not handed out again either.
      await database.pool.query("SELECT nextval('trip_locations_id_seq')");
      const before = (await database.pool.query('SELECT * FROM trip_locations ORDER BY id')).rows;

      await migrate(database.url, createLogger('test-setup', 'warn'));

      const after = (await database.pool.query('SELECT * FROM trip_locations ORDER BY id')).rows;
      // Every column as it was; the later migrations' new columns (attributes, filtered) are null on old rows.
      expect(after).toEqual(before.map((row) => ({ ...row, attributes: null, filtered: null })));
      const { rows: placed } = await database.pool.query(
        'SELECT imei, tableoid::regclass::text AS partition FROM trip_locations ORDER BY id',
      );
      expect(placed.map((row) => row.partition)).toEqual(times.map((time) => partitionOf(Date.parse(time))));
      expect(await partitions(database.pool)).toEqual(
        expect.arrayContaining(Array.from({ length: 8 }, (_, ahead) => partitionOf(Date.now() + ahead * DAY_MS))),
      );

      const insert = `INSERT INTO trip_locations (imei, gps_time, latitude, longitude, speed, ignition)
        VALUES ($1, $2, 1, 1, 1, true) ON CONFLICT (imei, gps_time) DO NOTHING RETURNING id::int AS id`;
      const fresh = await database.pool.query(insert, ['after-migration', new Date().toISOString()]);
      expect(fresh.rows[0].id).toBe(Math.max(...before.map((row) => Number(row.id))) + 2);
      const duplicate = await database.pool.query(insert, ['migrated-1', times[1]]);
      expect(duplicate.rowCount).toBe(0);
    } finally {
      await database.drop();
    }
  });
});

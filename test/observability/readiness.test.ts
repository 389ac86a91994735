// Topics are provisioned, never created by a client's first use, so a missing one is named: a service
// refuses to start without the topics it needs, and a running gateway whose topic disappears answers
// /readyz 503 naming it, and 200 again once the topic is provisioned. A gateway whose connections are all
// busy with reads is still ready: the database answers.
import { gatewayConfig, start as startGateway } from '@fleet/gateway';
import { baseEnv, closeDb, signToken, startWriter, uniqueImei, uniquePrefix, type Stack } from '../support/harness';
import { eventually } from '../support/eventually';
import { closeKafka, provisionTopics, testKafka } from '../support/kafka';
import { startStack } from '../support/stack';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';

afterAll(async () => {
  await closeKafka();
  await closeDb();
});

test('a gateway without its topics does not start, and says which are missing', async () => {
  const prefix = uniquePrefix('no-topics');
  await expect(startGateway(gatewayConfig(baseEnv(prefix)))).rejects.toThrow(
    `topics ${prefix}.trip-locations, ${prefix}.vehicle-groups, ${prefix}.replies, ${prefix}.positions missing: provision them with create-topics`,
  );
});

test('a writer without its topics does not start, and says which are missing', async () => {
  const prefix = uniquePrefix('no-topics');
  await expect(startWriter('trip', baseEnv(prefix))).rejects.toThrow(`${prefix}.trip-locations`);
});

describe('a running gateway whose topic is deleted', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'in-process', label: 'readiness', tripWriters: 0, groupWriters: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('answers /readyz 503 naming the topic, and 200 once it is provisioned again', async () => {
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: 'up', kafka: 'up' } });

    const admin = testKafka().admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [`${stack.prefix}.vehicle-groups`] });
    } finally {
      await admin.disconnect();
    }
    // Kafka deletes a topic in the background: it is listed for a moment after the request.
    const missing = await eventually(
      async () => {
        const response = await fetch(`${stack.url}/readyz`);
        return response.status === 503 ? response : undefined;
      },
      15_000,
      { what: '/readyz to answer 503' },
    );
    expect(await missing.json()).toEqual({
      status: 'not ready',
      checks: { postgres: 'up', redis: 'up', kafka: 'down' },
      detail: `topic ${stack.prefix}.vehicle-groups missing: provision them with create-topics (node shared/dist/cli/create-topics.js)`,
    });

    // Until the deletion has finished, Kafka refuses to create the topic again.
    await eventually(() => provisionTopics(stack.prefix).then(() => true), 15_000, { what: 'the topic to be created again' });
    expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
  });
});

describe('a gateway whose every database connection waits on a read', () => {
  let database: PrivateDatabase;
  let stack: Stack;
  beforeAll(async () => {
    database = await privateDatabase('readiness');
    stack = await startStack({
      mode: 'in-process',
      label: 'readiness-busy',
      tripWriters: 0,
      groupWriters: 0,
      env: { DATABASE_URL: database.url, DATABASE_POOL_SIZE: '2' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await database?.drop();
  });

  test('stays ready, since the database still answers, and answers the reads once the database frees them', async () => {
    const headers = { authorization: `Bearer ${await signToken()}` };
    const locker = await database.pool.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE trip_locations IN ACCESS EXCLUSIVE MODE');
    // Two history reads, one for each connection of the pool, both waiting on the lock.
    const reads = [uniqueImei(), uniqueImei()].map((imei) => fetch(`${stack.url}${DEVICES_PATH}/${imei}/trip-locations`, { headers }));
    try {
      await eventually(
        async () => {
          const { rows } = await database.pool.query<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE application_name = 'fleet-gateway' AND wait_event_type = 'Lock'",
          );
          return rows[0]!.waiting === 2;
        },
        10_000,
        { what: "both of the pool's connections to wait on the lock" },
      );

      const ready = await fetch(`${stack.url}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toEqual({
        status: 200,
        body: { status: 'ready', checks: { postgres: 'up', redis: 'up', kafka: 'up' } },
      });
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    const answered = await Promise.all(reads);
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
  });
});

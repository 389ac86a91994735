// Topics are provisioned, never created by a client's first use, so a missing one is named: a service
// refuses to start without the topics it needs, and a running gateway whose topic disappears answers
// /readyz 503 naming it, and 200 again once the topic is provisioned. A gateway whose connections for the
// fleet apps are all busy with reads is still ready (the database answers), and still serves what runs on
// its other pool.
import { randomUUID } from 'node:crypto';
import { gatewayConfig, start as startGateway } from '@fleet/gateway';
import { POOL_EXHAUSTED_DETAIL } from '@fleet/shared/db/database-read';
import { baseEnv, closeDb, signToken, startWriter, TEST_API_KEY, uniqueImei, uniquePrefix, type Stack } from '../support/harness';
import { getCategory } from '../categories/category-support';
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

describe('a gateway whose every connection for the fleet apps waits on a read', () => {
  let database: PrivateDatabase;
  let stack: Stack;
  let headers: Record<string, string>;
  beforeAll(async () => {
    database = await privateDatabase('readiness');
    stack = await startStack({
      mode: 'in-process',
      label: 'readiness-busy',
      tripWriters: 0,
      groupWriters: 0,
      env: { DATABASE_URL: database.url, DATABASE_FLEET_APP_POOL_SIZE: '2' },
    });
    headers = { authorization: `Bearer ${await signToken()}` };
  });
  afterAll(async () => {
    await stack?.stop();
    await database?.drop();
  });

  const historyRead = () => fetch(`${stack.url}${DEVICES_PATH}/${uniqueImei()}/trip-locations`, { headers });

  /** Runs `meanwhile` with both connections of the fleet apps' pool waiting on a lock, then frees them; their two reads' answers. */
  async function withBothConnectionsWaiting(meanwhile: () => Promise<void>): Promise<Response[]> {
    const locker = await database.pool.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE trip_locations IN ACCESS EXCLUSIVE MODE');
    const reads = [historyRead(), historyRead()];
    try {
      await eventually(
        async () => {
          const { rows } = await database.pool.query<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE application_name = 'fleet-gateway-apps' AND wait_event_type = 'Lock'",
          );
          return rows[0]!.waiting === 2;
        },
        10_000,
        { what: "both of the pool's connections to wait on the lock" },
      );
      await meanwhile();
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    return Promise.all(reads);
  }

  test('stays ready, since the database still answers, and answers the reads once the database frees them', async () => {
    const answered = await withBothConnectionsWaiting(async () => {
      const ready = await fetch(`${stack.url}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toEqual({
        status: 200,
        body: { status: 'ready', checks: { postgres: 'up', redis: 'up', kafka: 'up' } },
      });
    });
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
  });

  test('still serves category reads and device key lookups, and answers a further read 503 busy, not "database unavailable"', async () => {
    const answered = await withBothConnectionsWaiting(async () => {
      // Both run on the gateway's other pool: a category no one cached, and an OsmAnd key no one registered.
      const category = await getCategory(stack.url, randomUUID(), TEST_API_KEY);
      expect({ status: category.status, code: category.body.code }).toEqual({ status: 404, code: 'E-N1/1-01' });
      const tracker = await fetch(
        `${stack.url}/osmand/unregistered-key?id=${uniqueImei()}&lat=52.5&lon=13.4&timestamp=${Math.floor(Date.now() / 1000)}`,
      );
      expect({ status: tracker.status, code: ((await tracker.json()) as { code: string }).code }).toEqual({
        status: 401,
        code: 'E-G1/1-04',
      });

      const refused = await historyRead();
      expect({ status: refused.status, retryAfter: refused.headers.get('retry-after'), body: await refused.json() }).toEqual({
        status: 503,
        retryAfter: '1',
        body: { code: 'E-S1/1-08', message: 'The service is busy, retry later', detail: POOL_EXHAUSTED_DETAIL },
      });
    });
    expect(answered.map((response) => response.status)).toEqual([200, 200]);
  });
});

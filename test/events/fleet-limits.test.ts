// What a fleet may hold of what every event processor keeps in memory or multiplies each event by:
// geofences (GEOFENCES_MAX, GEOFENCES_MAX_POSITIONS) and webhooks (WEBHOOKS_MAX). Past a limit a create
// answers 409 naming it and stores nothing, and creates racing for the last place store one. On a
// database of its own, since the limits count every row.
import { testClient, type ApiClient } from '../support/api-client';
import { closeDb, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';
import { startStack } from '../support/stack';
import { GEOFENCES_PATH, WEBHOOKS_PATH } from '../../services/gateway/src/http/routes';
import { squareGeofence } from '../support/geofence-areas';

let database: PrivateDatabase;
let limited: Stack;
let client: ApiClient;

beforeAll(async () => {
  database = await privateDatabase('fleet_limits');
  limited = await startStack({
    mode: 'in-process',
    label: 'fleet-limits',
    tripWriters: 0,
    groupWriters: 0,
    env: {
      DATABASE_URL: database.url,
      GEOFENCES_MAX: '3',
      GEOFENCES_MAX_POSITIONS: '12',
      WEBHOOKS_MAX: '2',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
  });
  client = await testClient(limited);
});
afterAll(async () => {
  await limited?.stop();
  await database?.drop();
  await closeKafka();
  await closeDb();
});

const names = async (table: 'geofences' | 'webhooks', column: string) =>
  (await database.pool.query(`SELECT ${column} AS name FROM ${table} ORDER BY id`)).rows.map((row) => row.name);

const circle = (name: string) => ({ name, area: { type: 'Circle', center: [106.8, -6.2], radiusMeters: 200 } });

describe('geofences', () => {
  test('a polygon that would take the positions past GEOFENCES_MAX_POSITIONS is refused 409, and a circle still fits', async () => {
    for (const name of ['first square', 'second square'])
      expect((await client.post(GEOFENCES_PATH, squareGeofence(name))).status).toBe(200);

    const refused = await client.post(GEOFENCES_PATH, squareGeofence('third square'));
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 409,
      body: {
        code: 'E-C1/1-02',
        message: 'The fleet holds as many geofences as it may',
        detail: 'at most 12 polygon positions in all (GEOFENCES_MAX_POSITIONS): 10 are stored and this area has 5',
      },
    });
    expect((await client.post(GEOFENCES_PATH, circle('a circle'))).status).toBe(200);
    expect(await names('geofences', 'name')).toEqual(['first square', 'second square', 'a circle']);
  });

  test('past GEOFENCES_MAX geofences a create is refused 409, and a deleted one makes room for exactly one more', async () => {
    const refused = await client.post(GEOFENCES_PATH, circle('a fourth'));
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 409,
      body: {
        code: 'E-C1/1-02',
        message: 'The fleet holds as many geofences as it may',
        detail: 'at most 3 geofences (GEOFENCES_MAX), and 3 are stored',
      },
    });

    const [first] = (await database.pool.query('SELECT id FROM geofences ORDER BY id LIMIT 1')).rows;
    expect((await client.delete(`${GEOFENCES_PATH}/${first.id}`)).status).toBe(200);
    // Ten at once for the one place left: one is stored, whichever, and nine refused.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => client.post(GEOFENCES_PATH, circle(`racer ${i}`))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(await names('geofences', 'name')).toHaveLength(3);
  });
});

describe('webhooks', () => {
  const webhook = (n: number) => ({ url: `http://127.0.0.1:9/hook-${n}`, secret: 'limits-test-secret' });

  test('past WEBHOOKS_MAX a create is refused 409, and of ten racing for a freed place one is stored', async () => {
    for (const n of [1, 2]) expect((await client.post(WEBHOOKS_PATH, webhook(n))).status).toBe(200);
    const refused = await client.post(WEBHOOKS_PATH, webhook(3));
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 409,
      body: {
        code: 'E-C1/1-03',
        message: 'The fleet holds as many webhooks as it may',
        detail: 'at most 2 webhooks (WEBHOOKS_MAX), and 2 are stored',
      },
    });
    expect(await names('webhooks', 'url')).toEqual([webhook(1).url, webhook(2).url]);

    const [first] = (await database.pool.query('SELECT id FROM webhooks ORDER BY id LIMIT 1')).rows;
    expect((await client.delete(`${WEBHOOKS_PATH}/${first.id}`)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => client.post(WEBHOOKS_PATH, webhook(10 + i))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(await names('webhooks', 'url')).toHaveLength(2);
  });
});

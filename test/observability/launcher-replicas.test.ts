// `npm start` with GATEWAY_REPLICAS=2 and TRIP_WRITER_REPLICAS=2: two gateways, on PORT and PORT + 1, and
// two trip-writers in one consumer group, each supervised; both gateways serve writes, and SIGTERM stops
// them all. The launcher runs compiled, as `npm start` runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../../deploy/local/src/apache-kafka';
import { eventually } from '../support/eventually';
import { buildTrip, closeDb, db, postJson, signToken, TEST_API_KEY, TEST_JWT_SECRET, testServers, uniquePrefix } from '../support/harness';
import { closeKafka, testKafka } from '../support/kafka';

const root = path.resolve(__dirname, '..', '..');

let launcher: ChildProcess;
let port: number;
let prefix: string;
const lines: Array<{ msg: string; [field: string]: unknown }> = [];

/** The services the launcher runs now: their names, one entry per process. */
function running(): string[] {
  const children = readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, 'utf8').trim().split(/\s+/);
  return children
    .filter(Boolean)
    .map((pid) => /services\/([a-z-]+)\/dist\/main\.js/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

beforeAll(async () => {
  port = await freePort();
  prefix = uniquePrefix('launcher-replicas');
  launcher = spawn(process.execPath, [path.join(root, 'deploy/local/dist/start-stack.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      GATEWAY_REPLICAS: '2',
      TRIP_WRITER_REPLICAS: '2',
      TRIP_WRITER_METRICS_PORT: '0',
      GROUP_WRITER_METRICS_PORT: '0',
      DATABASE_URL: testServers().databaseUrl,
      REDIS_URL: testServers().redisUrl,
      KAFKA_BROKERS: testServers().kafkaBrokers,
      ...testServers().clientEnv,
      KAFKA_TOPIC_PREFIX: prefix,
      CACHE_KEY_PREFIX: `${prefix}:`,
      JWT_SECRET: TEST_JWT_SECRET,
      API_KEYS: TEST_API_KEY,
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: launcher.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as (typeof lines)[number]);
    } catch {
      // Not a log line.
    }
  });
  await eventually(() => lines.find((line) => line.msg.startsWith('stack is ready')), 120_000, { what: 'the stack to be ready' });
}, 150_000);

afterAll(async () => {
  if (launcher.exitCode === null) launcher.kill('SIGKILL');
  await closeKafka();
  await closeDb();
});

test('two gateways on PORT and PORT + 1 and two trip-writers in one group: both gateways store writes', async () => {
  expect(running()).toEqual(['gateway', 'gateway', 'group-writer', 'trip-writer', 'trip-writer']);
  expect(lines.find((line) => line.msg.startsWith('stack is ready'))!.msg).toBe(
    `stack is ready: http://localhost:${port}, http://localhost:${port + 1} (GET /readyz is 200)`,
  );
  const auth = { authorization: `Bearer ${await signToken()}` };
  for (const gatewayPort of [port, port + 1]) {
    const trip = buildTrip();
    const answer = await postJson(`http://127.0.0.1:${gatewayPort}/fleet/api/v1/trip-location`, trip, auth);
    expect(answer.status).toBe(200);
    const { rows } = await db().query('SELECT imei FROM trip_locations WHERE id = $1', [answer.body.data.id]);
    expect(rows).toEqual([{ imei: trip.imei }]);
  }
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const members = await eventually(
      async () => {
        const { groups } = await admin.describeGroups([`${prefix}.trip-writer`]);
        return groups[0]?.members.length === 2 ? groups[0].members : undefined;
      },
      30_000,
      { what: 'two members in the trip-writers group' },
    );
    expect(members).toHaveLength(2);
  } finally {
    await admin.disconnect();
  }
}, 60_000);

test('SIGTERM stops every gateway and writer, and the launcher exits 0', async () => {
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  launcher.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 60_000);

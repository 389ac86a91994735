// `npm start` with GATEWAY_REPLICAS=2 and TRIP_WRITER_REPLICAS=2: two gateways, on PORT and PORT + 1, and
// two trip-writers in one consumer group, each supervised; both gateways serve writes, and SIGTERM stops
// them all. The launcher runs compiled, as `npm start` runs it.
import { freePortRange } from '../../deploy/local/src/kafka-cluster';
import { eventually } from '../support/eventually';
import { buildTrip, closeDb, db, postJson, signToken, uniquePrefix } from '../support/harness';
import { closeKafka, testKafka } from '../support/kafka';
import { launchedServices, launcherEnv, type Launcher } from '../support/launcher';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let started: Launcher;
let port: number;
let prefix: string;

/** The services the launcher runs now: their names, one entry per process. */
function running(): string[] {
  return launchedServices(started)
    .map(({ name }) => name)
    .sort();
}

beforeAll(async () => {
  // The second gateway listens on PORT + 1.
  port = await freePortRange(2);
  prefix = uniquePrefix('launcher-replicas');
  started = await startStack({ mode: 'launcher', env: launcherEnv(prefix, port, { GATEWAY_REPLICAS: '2', TRIP_WRITER_REPLICAS: '2' }) });
}, 150_000);

afterAll(async () => {
  if (started?.process.exitCode === null) started.process.kill('SIGKILL');
  await closeKafka();
  await closeDb();
});

test('two gateways on PORT and PORT + 1 and two trip-writers in one group: both gateways store writes', async () => {
  expect(running()).toEqual(['event-processor', 'gateway', 'gateway', 'group-writer', 'trip-writer', 'trip-writer']);
  expect(started.lines.find((line) => line.msg.startsWith('stack is ready'))!.msg).toBe(
    `stack is ready: http://localhost:${port}, http://localhost:${port + 1} (GET /readyz is 200)`,
  );
  const auth = { authorization: `Bearer ${await signToken()}` };
  for (const gatewayPort of [port, port + 1]) {
    const trip = buildTrip();
    const answer = await postJson(`http://127.0.0.1:${gatewayPort}${TRIP_LOCATION_PATH}`, trip, auth);
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
  const exited = new Promise<number | null>((resolve) => started.process.once('exit', (code) => resolve(code)));
  started.process.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 60_000);

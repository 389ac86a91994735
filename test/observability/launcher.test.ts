// `npm start`'s launcher supervises the services it runs: one that crashes (SIGKILL, as the kernel's
// out-of-memory killer would) is started again after a pause, logged, while the others keep serving;
// and SIGTERM stops every process it started. The launcher runs compiled, as `npm start` runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../deploy/local/src/local-ports';
import { eventually } from '../support/eventually';
import { buildTrip, closeDb, db, postJson, signToken, uniquePrefix } from '../support/harness';
import { launchedServices, launcherEnv, launcherScript, type Launcher, type LauncherLine } from '../support/launcher';
import { FLEET_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const root = path.resolve(__dirname, '..', '..');

let started: Launcher;
let launcher: ChildProcess;
let lines: LauncherLine[];
let raw: string[];
let port: number;
let prefix: string;

/** The services the launcher runs now, by name. */
function services(): Record<string, number> {
  return Object.fromEntries(launchedServices(started).map(({ name, pid }) => [name, pid]));
}

/**
 * Reads the vehicle groups (a read of PostgreSQL through the gateway alone) every 100 ms until stopped,
 * and answers every status it got: what a fleet app saw while something else happened.
 */
function keepReading(): { stop(): Promise<number[]> } {
  const statuses: number[] = [];
  let reading = true;
  const loop = (async () => {
    const headers = { authorization: `Bearer ${await signToken()}` };
    while (reading) {
      statuses.push(
        await fetch(`http://127.0.0.1:${port}${FLEET_PATH}/vehicle-groups`, { headers }).then(
          (res) => res.status,
          () => 0,
        ),
      );
      await sleep(100);
    }
  })();
  return {
    async stop() {
      reading = false;
      await loop;
      return statuses;
    },
  };
}

beforeAll(async () => {
  port = await freePort();
  prefix = uniquePrefix('launcher');
  started = await startStack({ mode: 'launcher', env: launcherEnv(prefix, port) });
  ({ process: launcher, lines, raw } = started);
}, 150_000);

afterAll(async () => {
  if (launcher.exitCode === null) {
    launcher.kill('SIGKILL');
  }
  await closeDb();
});

test('a trip-writer killed with SIGKILL is started again and logged, and the gateway keeps serving', async () => {
  const before = services();
  expect(Object.keys(before).sort()).toEqual(['event-processor', 'gateway', 'group-writer', 'trip-writer']);
  const reads = keepReading();
  process.kill(before['trip-writer']!, 'SIGKILL');

  const restart = await eventually(() => lines.find((line) => line.msg === 'trip-writer exited unexpectedly; starting it again'), 60_000, {
    what: 'the launcher to log the crash',
  });
  expect(restart).toMatchObject({ service: 'stack', process: 'trip-writer', signal: 'SIGKILL' });
  const printed = raw.find((text) => text.includes('trip-writer exited unexpectedly'))!;
  expect(printed.match(/"service":/g)).toHaveLength(1);
  const after = await eventually(
    () => {
      const now = services();
      return now['trip-writer'] && now['trip-writer'] !== before['trip-writer'] ? now : undefined;
    },
    60_000,
    { what: 'a new trip-writer process' },
  );
  // The others were never touched.
  expect(after.gateway).toBe(before.gateway);
  expect(after['group-writer']).toBe(before['group-writer']);
  expect(after['event-processor']).toBe(before['event-processor']);

  const trip = buildTrip();
  const token = await signToken();
  const answer = await eventually(
    async () => {
      const response = await postJson(`http://127.0.0.1:${port}${TRIP_LOCATION_PATH}`, trip, { authorization: `Bearer ${token}` });
      return response.status === 200 ? response : undefined;
    },
    60_000,
    { what: 'a trip create answered 200 through the restarted writer' },
  );
  const { rows } = await db().query('SELECT imei FROM trip_locations WHERE id = $1', [answer.body.data.id]);
  expect(rows).toEqual([{ imei: trip.imei }]);

  // From the kill until the restarted writer stored a trip, every read was answered, and answered 200.
  const statuses = await reads.stop();
  expect(statuses.length).toBeGreaterThan(3);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
}, 150_000);

test('services given one metrics port between them exit the launcher 1 with one line naming both variables, before anything starts', async () => {
  const clash = spawn(process.execPath, [launcherScript], {
    cwd: root,
    // Trip-writer 1 would take TRIP_WRITER_METRICS_PORT + 1, the group-writer's port.
    env: launcherEnv(prefix, port + 50, {
      TRIP_WRITER_REPLICAS: '2',
      TRIP_WRITER_METRICS_PORT: String(port + 60),
      GROUP_WRITER_METRICS_PORT: String(port + 61),
    }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  clash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => clash.once('close', (code) => resolve(code)));

  expect(status).toBe(1);
  expect(
    stdout
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as LauncherLine),
  ).toEqual([
    expect.objectContaining({
      level: 60,
      msg: `GROUP_WRITER_METRICS_PORT and TRIP_WRITER_METRICS_PORT+1 are both port ${port + 61}: give each service a port of its own`,
    }),
  ]);
});

test('a second launcher on the same PORT exits 1 with one line naming the port, starts nothing, and the first keeps serving', async () => {
  const running = services();
  const reads = keepReading();
  const second = spawn(process.execPath, [launcherScript], {
    cwd: root,
    env: launcherEnv(prefix, port),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  second.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => second.once('close', (code) => resolve(code)));
  const statuses = await reads.stop();
  expect(status).toBe(1);
  const logged = stdout
    .trim()
    .split('\n')
    .map((text) => JSON.parse(text) as LauncherLine);
  expect(logged).toEqual([
    expect.objectContaining({ level: 60, msg: expect.stringMatching(new RegExp(`^PORT=${port} is in use by another process`)) }),
  ]);
  expect(services()).toEqual(running);
  // The first served throughout: every read while the second tried to start was answered 200.
  expect(statuses.length).toBeGreaterThan(0);
  expect(statuses.filter((code) => code !== 200)).toEqual([]);
  const answer = await postJson(`http://127.0.0.1:${port}${TRIP_LOCATION_PATH}`, buildTrip(), {
    authorization: `Bearer ${await signToken()}`,
  });
  expect(answer.status).toBe(200);
}, 90_000);

test('SIGTERM stops every process the launcher started, and the launcher exits 0', async () => {
  const running = Object.values(services());
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  launcher.kill('SIGTERM');
  expect(await exited).toBe(0);
  const alive = running.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  expect(alive).toEqual([]);
}, 60_000);

// Graceful shutdown of the compiled services run as real processes, as an orchestrator runs them:
// SIGTERM stops accepting connections, lets in-flight requests finish, commits the writers' offsets,
// and the process exits 0 after stop() has run to its end.
import http from 'node:http';
import net from 'node:net';

import { baseEnv, buildGroup, buildTrip, closeDb, db, signToken, provisionedPrefix } from '../support/harness';
import { closeKafka, committedOffsets, messagesIn } from '../support/kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { scrape, scrapeUntil } from '../support/scrape';
import { eventually } from '../support/eventually';
import { TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';

const TRIP = TRIP_LOCATION_PATH;

function logged(service: ServiceProcess, msg: string): boolean {
  return service.logs.some((line) => line.msg === msg);
}

/** A POST on a connection of its own, so that a refused new connection cannot be hidden by a pooled one. */
function post(port: number, pathname: string, body: unknown, token: string): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: `Bearer ${token}` },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : undefined }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Messages the consumer group has committed, and messages the topic holds, summed over its partitions. */
async function committedAndWritten(groupId: string, topic: string): Promise<{ committed: number; written: number }> {
  const committed = [...(await committedOffsets(groupId, topic)).values()].reduce((sum, offset) => sum + offset, 0);
  return { committed, written: await messagesIn(topic) };
}

afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('SIGTERM to the gateway: in-flight requests complete 200, new connections are refused, the process exits 0', async () => {
  const prefix = await provisionedPrefix('shutdown-gateway');
  // Longer than the 20 s other services get to stop: the gateway's own deadline must outlast its drain.
  const replyTimeoutMs = 30_000;
  const env = baseEnv(prefix, { REPLY_TIMEOUT_MS: String(replyTimeoutMs) });
  const tripWriter = await spawnService('trip-writer', env);
  const groupWriter = await spawnService('group-writer', env);
  const gateway = await spawnService('gateway', env);
  const token = await signToken();
  expect((await post(gateway.port, TRIP, buildTrip(), token)).status).toBe(200);
  expect((await post(gateway.port, VEHICLE_GROUP_PATH, buildGroup(), token)).status).toBe(200);

  // With the writer frozen, requests stay in flight until it is thawed.
  tripWriter.kill('SIGSTOP');
  const trips = Array.from({ length: 5 }, () => buildTrip());
  const inFlight = trips.map((trip) => post(gateway.port, TRIP, trip, token));
  const waiting = await scrapeUntil(`${gateway.url}/metrics`, (metrics) => metrics.value('fleet_kafka_pending_replies') === trips.length);
  expect(waiting.value('fleet_kafka_pending_replies')).toBe(trips.length);

  gateway.kill('SIGTERM');
  await eventually(async () => connectionRefused(gateway.port), 5000, { what: 'new connections to be refused' });
  // The drain waits up to REPLY_TIMEOUT_MS + 1 s for replies; the process must not give up before it ends.
  const stopping = await gateway.waitForLog((line) => line.msg === 'stopping', 'the stopping line');
  expect(stopping.deadlineMs).toBeGreaterThan(replyTimeoutMs + 1000);
  tripWriter.kill('SIGCONT');

  const responses = await Promise.all(inFlight);
  expect(responses.map((response) => response.status)).toEqual(trips.map(() => 200));
  expect(await gateway.exited).toBe(0);
  expect(logged(gateway, 'gateway stopped')).toBe(true);
  const stored = await db().query('SELECT count(*)::int AS n FROM trip_locations WHERE imei = ANY($1)', [trips.map((trip) => trip.imei)]);
  expect(stored.rows[0].n).toBe(trips.length);

  // The writers, stopped in turn, commit what they stored before exiting 0.
  for (const [writer, topic] of [
    [tripWriter, `${prefix}.trip-locations`],
    [groupWriter, `${prefix}.vehicle-groups`],
  ] as const) {
    writer.kill('SIGTERM');
    expect(await writer.exited).toBe(0);
    expect(logged(writer, `${writer.name} stopped`)).toBe(true);
    const offsets = await committedAndWritten(`${prefix}.${writer.name}`, topic);
    expect(offsets.written).toBeGreaterThan(0);
    expect(offsets.committed).toBe(offsets.written);
  }
}, 120_000);

test('SIGTERM to a writer under load: it exits 0 having committed what it stored, and its successor re-delivers nothing', async () => {
  const prefix = await provisionedPrefix('shutdown-writer');
  const env = baseEnv(prefix, { REPLY_TIMEOUT_MS: '30000' });
  const first = await spawnService('trip-writer', env);
  const gateway = await spawnService('gateway', env);
  const token = await signToken();

  const trips = Array.from({ length: 60 }, () => buildTrip());
  let answered = 0;
  const sending = (async () => {
    const responses: number[] = [];
    // Four clients, each posting its share one after the other.
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        for (let index = client; index < trips.length; index += 4) {
          responses.push((await post(gateway.port, TRIP, trips[index], token)).status);
          answered += 1;
        }
      }),
    );
    return responses;
  })();

  await eventually(async () => answered >= 12, 20_000, { what: 'some requests to be answered' });
  first.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  expect(logged(first, 'trip-writer stopped')).toBe(true);

  // The leaver sent LeaveGroup, so the successor joins at once; what was posted meanwhile waits in the
  // gateway for its reply (REPLY_TIMEOUT_MS 30 s).
  const successor = await spawnService('trip-writer', env);
  const statuses = await sending;
  expect(statuses).toEqual(trips.map(() => 200));

  const metrics = await scrape(`${successor.url}/metrics`);
  expect(metrics.value('fleet_writer_duplicates_skipped_total')).toBe(0);
  expect(metrics.value('fleet_writer_rows_inserted_total')).toBeLessThan(trips.length);
  const stored = await db().query('SELECT count(*)::int AS n FROM trip_locations WHERE imei = ANY($1)', [trips.map((trip) => trip.imei)]);
  expect(stored.rows[0].n).toBe(trips.length);

  gateway.kill('SIGTERM');
  successor.kill('SIGTERM');
  expect(await gateway.exited).toBe(0);
  expect(await successor.exited).toBe(0);
  const offsets = await committedAndWritten(`${prefix}.trip-writer`, `${prefix}.trip-locations`);
  expect(offsets.committed).toBe(offsets.written);
}, 180_000);

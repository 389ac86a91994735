// Live streams at the scale of a fleet app's users, against a gateway running as its own process, so that
// its memory is its own: 1,000 streams at once each get their device's positions while the gateway's
// memory stays bounded, and a client that stops reading is cut off without harm to the others.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { EventStream } from '../support/event-stream';
import { eventually } from '../support/eventually';
import { closeKafka } from '../support/kafka';
import { buildTrip, closeDb, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { scrape } from '../support/scrape';
import { FLEET_PATH, TRIP_LOCATION_BATCH_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const STREAMS = 1000;
/** What the gateway may hold for each open stream: its socket, request, response and subscription. */
const BYTES_PER_STREAM = 64 * 1024;
/** What a stream's slow client may make the gateway hold before it is cut (the route's BUFFER_LIMIT). */
const BUFFER_LIMIT = 1024 * 1024;

let stack: Stack;
let gateway: ServiceProcess;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'stream-capacity' });
  gateway = await spawnService('gateway', stack.env);
  auth = { authorization: `Bearer ${await signToken()}` };
}, 120_000);
afterAll(async () => {
  await stopAllServices();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const streamUrl = (imeis: string[]) => `${gateway.url}${FLEET_PATH}/positions/stream?${imeis.map((imei) => `imei=${imei}`).join('&')}`;

/** The gateway process's resident memory, in bytes. */
function residentBytes(): number {
  const status = readFileSync(`/proc/${gateway.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

const gatewayMetric = async (name: string) => (await scrape(`${gateway.url}/metrics`)).value(name);

let clock = Date.now() - 6 * 3600_000;
/** Posts one batch, one position per entry of `imeis` (a device may repeat), and answers the ids by device. */
async function postBatch(imeis: string[]): Promise<Map<string, number[]>> {
  const trips = imeis.map((imei) => buildTrip({ imei, gpsTime: new Date((clock += 1000)).toISOString() }));
  const res = await postJson(`${stack.url}${TRIP_LOCATION_BATCH_PATH}`, trips, auth);
  expect(res.status).toBe(200);
  const ids = new Map<string, number[]>();
  res.body.data.items.forEach((item: { id: number }, i: number) => {
    const imei = imeis[i]!;
    ids.set(imei, [...(ids.get(imei) ?? []), item.id]);
  });
  return ids;
}

test(`${STREAMS} streams at once on one gateway each get every position of their device, in bounded memory`, async () => {
  const devices = Array.from({ length: STREAMS }, () => uniqueImei());
  // The first stream starts the gateway's feed; what is measured is what the next thousand add.
  const first = await EventStream.open(streamUrl([uniqueImei()]), auth);
  expect(first.status).toBe(200);
  const before = residentBytes();

  const streams: EventStream[] = [];
  for (let at = 0; at < STREAMS; at += 100) {
    streams.push(...(await Promise.all(devices.slice(at, at + 100).map((imei) => EventStream.open(streamUrl([imei]), auth)))));
  }
  expect(streams.every((stream) => stream.status === 200)).toBe(true);
  expect(await gatewayMetric('fleet_gateway_streams')).toBe(STREAMS + 1);

  const rounds = 5;
  const expected = new Map<string, number[]>(devices.map((imei) => [imei, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const [imei, ids] of await postBatch(devices)) expected.get(imei)!.push(...ids);
  }
  await eventually(() => streams.every((stream) => stream.events.length >= rounds), 30_000, {
    what: `${rounds} events on each of ${STREAMS} streams`,
  });
  streams.forEach((stream, i) => expect(stream.ids()).toEqual(expected.get(devices[i]!)));
  expect(streams.every((stream) => stream.events.every((received) => received.data.imei === devices[streams.indexOf(stream)]))).toBe(true);

  const grown = residentBytes() - before;
  expect(grown).toBeLessThan(STREAMS * BYTES_PER_STREAM);

  for (const stream of streams) stream.close();
  first.close();
  await eventually(async () => (await gatewayMetric('fleet_gateway_streams')) === 0, 10_000, { what: 'every stream to be closed' });
}, 180_000);

test('a stream naming 1,001 devices is refused 400, not cut short to 1,000', async () => {
  const res = await fetch(streamUrl(Array.from({ length: 1001 }, (_, i) => `35${String(i).padStart(13, '0')}`)), { headers: auth });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ code: 'E-V1/1-06' });
});

/** A client that opens a stream, reads its head, then reads nothing more. */
function stalledStream(url: string): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const { port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', () => undefined);
    socket.once('data', (head) => {
      socket.pause();
      if (!head.toString().startsWith('HTTP/1.1 200')) reject(new Error(`the stream was answered ${head.toString().split('\r\n')[0]}`));
      else resolve({ socket, closed });
    });
    socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\n\r\n`);
  });
}

test("a client that stops reading is cut off once 1 MiB waits for it; the other streams get every event and the gateway's memory holds", async () => {
  const devices = Array.from({ length: 100 }, () => uniqueImei());
  const healthy = await EventStream.open(streamUrl(devices), auth);
  const slow = await stalledStream(streamUrl(devices));
  const cutBefore = await gatewayMetric('fleet_gateway_streams_cut_total');
  const before = residentBytes();

  // Batches of ten positions for each device, until the kernel's socket buffers toward the stalled client
  // are full and the gateway's own buffer for it passes the limit.
  const expected: number[] = [];
  const batch = devices.flatMap((imei) => Array.from({ length: 10 }, () => imei));
  let peak = before;
  await eventually(
    async () => {
      for (const ids of (await postBatch(batch)).values()) expected.push(...ids);
      peak = Math.max(peak, residentBytes());
      return (await gatewayMetric('fleet_gateway_streams_cut_total')) > cutBefore;
    },
    120_000,
    { what: 'the stalled client to be cut off', intervalMs: 0 },
  );
  // Reading again, the client gets what the kernel held for it, then the end of its stream.
  slow.socket.resume();
  await slow.closed;

  await eventually(() => healthy.events.length >= expected.length, 30_000, { what: `all ${expected.length} events on the healthy stream` });
  expect(healthy.ids().sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
  expect(await gatewayMetric('fleet_gateway_streams_cut_total')).toBe(cutBefore + 1);
  expect(await gatewayMetric('fleet_gateway_streams')).toBe(1);
  // Its memory grew by about what the stalled client's buffer held, not by what was sent.
  expect(peak - before).toBeLessThan(32 * BUFFER_LIMIT);
  healthy.close();
}, 180_000);

// The event layer from outside: positions posted over the JSON API, OsmAnd and Teltonika raise each
// event once, in the device's order; late and filtered fixes raise nothing; the events are read a page at
// a time, streamed with resumes that miss and repeat nothing, and delivered to a webhook that fails its
// first tries, signed. Every geofence here is at a place of this run's own: geofences apply to every
// device, and other suites create theirs elsewhere.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../deploy/local/src/local-ports';
import { CODEC_8, encodeAvlData, framePacket, type RecordToEncode } from '../../services/teltonika/src/codec';
import { teltonikaConfig } from '../../services/teltonika/src/config';
import { startTeltonika, type TeltonikaListener } from '../../services/teltonika/src/start';
import { gatewayConfig, start as startGateway } from '@fleet/gateway';
import { eventProcessorConfig, start as startEventProcessor } from '@fleet/event-processor';
import { createLogger } from '@fleet/shared/logger';
import { testClient, apiClient, type ApiClient } from '../support/api-client';
import { eventually } from '../support/eventually';
import { EventStream } from '../support/event-stream';
import { closeDb, db, signToken, uniqueDeviceImei, type Stack } from '../support/harness';
import { closeKafka, produceRaw } from '../support/kafka';
import { scrape } from '../support/scrape';
import { startStack } from '../support/stack';
import { TeltonikaDevice } from '../support/teltonika-device';
import { storeTripLocations } from '../../services/trip-writer/src/trip-store';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import {
  DEVICES_PATH,
  EVENTS_PATH,
  GEOFENCES_PATH,
  TRIP_LOCATION_BATCH_PATH,
  TRIP_LOCATION_PATH,
  WEBHOOKS_PATH,
} from '../../services/gateway/src/http/routes';

let stack: Stack;
let api: ApiClient;
let listener: TeltonikaListener;

// A place of this run's own, far from the other suites' positions and geofences.
const center: [number, number] = [170 + Math.random() * 5, -45 + Math.random() * 2];
const inside = { longitude: center[0], latitude: center[1] };
const outside = { longitude: center[0], latitude: center[1] + 0.02 };
let fenceId: number;

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'events',
    eventProcessors: 1,
    env: {
      JWT_DEVICE_CLAIM: 'device_id',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_FIRST_RETRY_AFTER: '200ms',
      DEVICE_OFFLINE_AFTER: '4s',
    },
  });
  api = await testClient(stack);
  listener = await startTeltonika(teltonikaConfig({ ...stack.env, TELTONIKA_PORT: String(await freePort()), METRICS_PORT: '0' }));
  const fence = await api.post(GEOFENCES_PATH, {
    name: 'Yard',
    area: { type: 'Circle', center, radiusMeters: 300 },
    speedLimitKmh: 40,
  });
  fenceId = fence.body.data.id;
});
afterAll(async () => {
  await listener?.stop();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

let clock = Date.now() - 30 * 60_000;
/** A fix ten seconds after the last one built. */
function fix(imei: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  clock += 10_000;
  return { imei, gpsTime: new Date(clock).toISOString(), ...outside, speed: 20, ignition: false, ...overrides };
}

interface StoredEvent {
  id: number;
  type: string;
  positionId: number;
  attributes: Record<string, unknown>;
}

/** The device's events in id order; geofence events only for this suite's geofence. */
async function eventsOf(imei: string): Promise<StoredEvent[]> {
  const { rows } = await db().query(
    `SELECT id, type, position_id, attributes FROM events WHERE imei = $1
     AND (attributes->>'geofenceId' IS NULL OR attributes->>'geofenceId' = $2) ORDER BY id`,
    [imei, String(fenceId)],
  );
  return rows.map((row) => ({ id: Number(row.id), type: row.type, positionId: Number(row.position_id), attributes: row.attributes }));
}

/** Resolves once the processor has applied its rules to the device's position `id`. */
async function processed(imei: string, id: number): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await db().query('SELECT last_position_id FROM event_device_states WHERE imei = $1', [imei]);
      return rows[0] && Number(rows[0].last_position_id) >= id;
    },
    20_000,
    { what: `the event processor to reach position ${id} of ${imei}` },
  );
}

interface Receiver {
  url: string;
  received: Array<{ status: number; body: string; headers: http.IncomingHttpHeaders }>;
  close(): void;
}

/** A webhook receiver on this machine answering its nth request (from 0) with `statusFor(n)`. */
async function startReceiver(statusFor: (attempt: number) => number): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = statusFor(received.length);
      received.push({ status, body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    close: () => server.close(),
  };
}

const processorMetrics = () => `http://127.0.0.1:${stack.eventProcessors[0]!.metricsPort}/metrics`;

const typesOf = (events: StoredEvent[]) => events.filter((e) => !e.type.startsWith('device')).map((e) => e.type);

describe('events from a scripted track', () => {
  test('the JSON API: ignition, geofence and overspeed events, each once, with the position that raised it', async () => {
    const imei = uniqueDeviceImei();
    expect((await api.patch(`${DEVICES_PATH}/${imei}`, { speedLimitKmh: 60 })).body).toEqual({
      message: 'Device has been updated',
      data: { imei, speedLimitKmh: 60 },
    });
    const track = [
      fix(imei, { speed: 30, ignition: false }),
      fix(imei, { ...inside, speed: 30, ignition: true }),
      fix(imei, { ...inside, speed: 50, ignition: true }),
      fix(imei, { ...inside, speed: 55, ignition: true }),
      fix(imei, { speed: 30, ignition: true }),
      fix(imei, { speed: 70, ignition: true }),
      fix(imei, { speed: 0, ignition: false }),
    ];
    const ids: number[] = [];
    for (const position of track) ids.push(await api.postTrip(position));
    await processed(imei, ids.at(-1)!);

    const events = await eventsOf(imei);
    expect(events.filter((e) => !e.type.startsWith('device')).map((e) => [e.type, e.positionId, e.attributes])).toEqual([
      ['ignitionOn', ids[1], {}],
      ['geofenceEnter', ids[1], { geofenceId: fenceId, geofenceName: 'Yard' }],
      ['overspeed', ids[2], { speed: 50, speedLimitKmh: 40 }],
      ['geofenceExit', ids[4], { geofenceId: fenceId, geofenceName: 'Yard' }],
      ['overspeed', ids[5], { speed: 70, speedLimitKmh: 60 }],
      ['ignitionOff', ids[6], {}],
    ]);
  });

  test('the speed limit that counts is the one in force when the processor applies the position, not at its receipt', async () => {
    const [removed, added] = [uniqueDeviceImei(), uniqueDeviceImei()];
    await api.patch(`${DEVICES_PATH}/${removed}`, { speedLimitKmh: 80 });
    // Posted while no processor runs: a lag of however long the limits take to change.
    await stack.eventProcessors.shift()!.stop();
    const ids = [await api.postTrip(fix(removed, { speed: 85 })), await api.postTrip(fix(added, { speed: 85 }))];
    await api.patch(`${DEVICES_PATH}/${removed}`, { speedLimitKmh: null });
    await api.patch(`${DEVICES_PATH}/${added}`, { speedLimitKmh: 80 });
    const config = eventProcessorConfig(stack.env);
    stack.eventProcessors.push(await startEventProcessor(config, createLogger('event-processor', config.LOG_LEVEL)));
    await processed(removed, ids[0]!);
    await processed(added, ids[1]!);

    expect(typesOf(await eventsOf(removed))).toEqual([]);
    expect((await eventsOf(added)).map((e) => [e.type, e.attributes])).toEqual([['overspeed', { speed: 85, speedLimitKmh: 80 }]]);
  });

  test('OsmAnd: the ignition parameter raises ignitionOn and ignitionOff', async () => {
    const imei = uniqueDeviceImei();
    const registered = await api.post(DEVICES_PATH, { imei });
    const url = `${stack.url}/osmand/${registered.body.data.key}`;
    for (const ignition of [false, true, false]) {
      clock += 10_000;
      const res = await fetch(
        `${url}?id=${imei}&timestamp=${Math.floor(clock / 1000)}&lat=${outside.latitude}&lon=${outside.longitude}&ignition=${ignition}`,
      );
      expect(res.status).toBe(200);
    }
    const last = await db().query('SELECT max(id) AS id FROM trip_locations WHERE imei = $1', [imei]);
    await processed(imei, Number(last.rows[0].id));
    expect(typesOf(await eventsOf(imei))).toEqual(['ignitionOn', 'ignitionOff']);
  });

  test('Teltonika: IO 239 raises ignitionOn and ignitionOff, acknowledged once committed', async () => {
    const imei = uniqueDeviceImei();
    await api.post(DEVICES_PATH, { imei });
    const record = (ignition: number): RecordToEncode => {
      clock += 10_000;
      return {
        timestamp: clock,
        priority: 1,
        ...outside,
        altitude: 10,
        angle: 0,
        satellites: 9,
        speed: 20,
        eventIoId: 239,
        io: { 1: { 239: ignition } },
      };
    };
    const device = new TeltonikaDevice(listener.port);
    expect(await device.handshake(imei)).toBe(0x01);
    expect(await device.packet(framePacket(encodeAvlData(CODEC_8, [record(1), record(0), record(0), record(1)])))).toBe(4);
    device.end();
    const last = await db().query('SELECT max(id) AS id FROM trip_locations WHERE imei = $1', [imei]);
    await processed(imei, Number(last.rows[0].id));
    expect(typesOf(await eventsOf(imei))).toEqual(['ignitionOff', 'ignitionOn']);
  });

  test('deviceOffline once nothing came for DEVICE_OFFLINE_AFTER, and deviceOnline with the next position', async () => {
    const imei = uniqueDeviceImei();
    const first = await api.postTrip(fix(imei));
    const offline = await eventually(async () => (await eventsOf(imei)).find((e) => e.type === 'deviceOffline'), 20_000, {
      what: 'deviceOffline',
    });
    expect(offline.positionId).toBe(first);
    const next = await api.postTrip(fix(imei));
    await processed(imei, next);
    expect((await eventsOf(imei)).map((e) => [e.type, e.positionId])).toEqual([
      ['deviceOffline', first],
      ['deviceOnline', next],
    ]);
  });
});

describe('a trip-writer that stops between its commit and its announcement', () => {
  test('the committed position raises its event once its command comes again, and once only, however often it comes', async () => {
    const imei = uniqueDeviceImei();
    await processed(imei, await api.postTrip(fix(imei, { ignition: false })));
    // What the stopped writer left: the row committed, not announced, the command's offset not committed.
    const command = { ...fix(imei, { ignition: true }), receivedAt: new Date().toISOString() } as TripLocationCommand;
    const [committed] = await storeTripLocations(db(), [command]);
    // Delivered again twice: the second as after a writer that announced it and stopped before its offset.
    for (let delivery = 0; delivery < 2; delivery += 1) {
      await produceRaw(`${stack.prefix}.trip-locations`, [{ key: imei, value: JSON.stringify(command) }]);
    }
    const next = await api.postTrip(fix(imei, { ignition: true }));
    await processed(imei, next);

    expect((await eventsOf(imei)).filter((e) => !e.type.startsWith('device')).map((e) => [e.type, e.positionId])).toEqual([
      ['ignitionOn', committed!.id],
    ]);
  });
});

describe('positions that must raise nothing', () => {
  test('a buffered upload of older fixes inside a geofence changes nothing and is counted late', async () => {
    const imei = uniqueDeviceImei();
    const now = await api.postTrip(fix(imei, { ignition: true }));
    await processed(imei, now);
    const lateBefore = (await scrape(processorMetrics())).value('fleet_events_late_positions_total');
    const old = Array.from({ length: 5 }, (_, i) => ({
      imei,
      gpsTime: new Date(clock - 60 * 60_000 + i * 1000).toISOString(),
      ...inside,
      speed: 90,
      ignition: i % 2 === 0,
    }));
    const batch = await api.post(TRIP_LOCATION_BATCH_PATH, old);
    expect(batch.status).toBe(200);
    expect(batch.body.data.accepted).toBe(5);
    await processed(imei, Math.max(...batch.body.data.items.map((item: { id: number }) => item.id)));

    expect(await eventsOf(imei)).toEqual([]);
    expect((await scrape(processorMetrics())).value('fleet_events_late_positions_total')).toBe(lateBefore + 5);
  });

  test('a geofence created or deleted while the processor runs applies from the next fix on', async () => {
    const imei = uniqueDeviceImei();
    const gate: [number, number] = [center[0], center[1] - 0.05];
    const atGate = { longitude: gate[0], latitude: gate[1] };
    const before = await api.postTrip(fix(imei, atGate));
    await processed(imei, before);
    const created = await api.post(GEOFENCES_PATH, { name: 'Gate', area: { type: 'Circle', center: gate, radiusMeters: 300 } });
    expect(created.status).toBe(200);
    const gateId: number = created.body.data.id;
    const entered = await api.postTrip(fix(imei, atGate));
    await processed(imei, entered);
    expect((await api.delete(`${GEOFENCES_PATH}/${gateId}`)).status).toBe(200);
    const after = await api.postTrip(fix(imei, atGate));
    await processed(imei, after);

    const { rows } = await db().query(
      `SELECT type, position_id FROM events WHERE imei = $1 AND attributes->>'geofenceId' = $2 ORDER BY id`,
      [imei, String(gateId)],
    );
    expect(rows.map((row) => [row.type, Number(row.position_id)])).toEqual([['geofenceEnter', entered]]);
    const state = await db().query('SELECT geofence_ids FROM event_device_states WHERE imei = $1', [imei]);
    expect(state.rows[0].geofence_ids).toEqual([]);
  });

  test('a filtered fix raises nothing and stays out of the last location', async () => {
    const imei = uniqueDeviceImei();
    const kept = await api.postTrip(fix(imei, { ignition: true }));
    await processed(imei, kept);
    // 0,0: filtered as `zero`; it would otherwise turn the ignition off.
    const zero = await api.post(TRIP_LOCATION_PATH, fix(imei, { latitude: 0, longitude: 0, ignition: false }));
    expect(zero.status).toBe(200);
    const after = await api.postTrip(fix(imei, { ignition: true }));
    await processed(imei, after);

    expect(await eventsOf(imei)).toEqual([]);
    const last = await api.get(`${DEVICES_PATH}/${imei}/last-location`);
    expect(last.body.data.id).toBe(after);
  });
});

describe('the events read', () => {
  test('filters by device and type, pages by id, and keeps a device token to its own device', async () => {
    const imei = uniqueDeviceImei();
    const ids: number[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await api.postTrip(fix(imei, { ignition: i % 2 === 1 })));
    await processed(imei, ids.at(-1)!);

    const first = await api.get(`${EVENTS_PATH}?imei=${imei}&type=ignitionOn&type=ignitionOff&limit=3`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: StoredEvent) => e.type)).toEqual(['ignitionOn', 'ignitionOff', 'ignitionOn']);
    expect(first.body.data[0]).toEqual({
      id: expect.any(Number),
      type: 'ignitionOn',
      imei,
      positionId: ids[1],
      gpsTime: expect.any(String),
      latitude: outside.latitude,
      longitude: outside.longitude,
      createdAt: expect.any(String),
      attributes: {},
    });
    const second = await api.get(`${EVENTS_PATH}?imei=${imei}&type=ignitionOn&type=ignitionOff&limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ type: 'ignitionOff', positionId: ids[4] })], nextCursor: null });

    const own = api.as(`Bearer ${await signToken({ device_id: imei })}`);
    expect((await own.get(EVENTS_PATH)).body.data.every((e: StoredEvent & { imei: string }) => e.imei === imei)).toBe(true);
    const other = await own.get(`${EVENTS_PATH}?imei=${uniqueDeviceImei()}`);
    expect(other.status).toBe(403);
    expect((await api.get(`${EVENTS_PATH}?type=parked`)).status).toBe(400);
  });
});

describe('the events read refuses what it does not take', () => {
  test('an unknown, misspelt or bracketed parameter is a 400 E-V1/1-06 naming it, not the whole fleet', async () => {
    for (const query of ['foo=bar', 'imei[]=356307042441013', 'IMEI=356307042441013']) {
      const answer = await api.get(`${EVENTS_PATH}?${query}`);
      expect([query, answer.status, answer.body.code]).toEqual([query, 400, 'E-V1/1-06']);
      expect(answer.body.detail).toMatch(
        new RegExp(`^${query.split('=')[0]!.replace(/[[\]]/g, '\\$&')}: is not a parameter of this route`),
      );
    }
    // Every read route, express's and the direct ones alike.
    for (const path of [`${DEVICES_PATH}/${uniqueDeviceImei()}/last-location?foo=1`, `${GEOFENCES_PATH}?foo=1`, `${WEBHOOKS_PATH}?foo=1`]) {
      expect([path, (await api.get(path)).status]).toEqual([path, 400]);
    }
  });

  test('a cursor followed with other filters is refused; with its own it pages on', async () => {
    const [imei, another] = [uniqueDeviceImei(), uniqueDeviceImei()];
    for (const device of [imei, another]) {
      const ids: number[] = [];
      for (let i = 0; i < 4; i += 1) ids.push(await api.postTrip(fix(device, { ignition: i % 2 === 1 })));
      await processed(device, ids.at(-1)!);
    }
    const first = await api.get(`${EVENTS_PATH}?imei=${imei}&type=ignitionOn&type=ignitionOff&limit=1`);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    for (const query of ['', `imei=${another}&`, `imei=${imei}&type=ignitionOn&`]) {
      const answer = await api.get(`${EVENTS_PATH}?${query}limit=1&cursor=${first.body.nextCursor}`);
      expect([query, answer.status, answer.body.code]).toEqual([query, 400, 'E-V1/1-06']);
      expect(answer.body.detail).toMatch(/^cursor: was made for other filters/);
    }
    // The same filters in another order are the same filters.
    const next = await api.get(`${EVENTS_PATH}?type=ignitionOff&type=ignitionOn&imei=${imei}&limit=1&cursor=${first.body.nextCursor}`);
    expect(next.status).toBe(200);
    expect(next.body.data.map((e: StoredEvent & { imei: string }) => e.imei)).toEqual([imei]);
  });
});

describe('the events stream', () => {
  test('following two devices through 20 dropped connections, it receives every event once, in commit order', async () => {
    const devices = [uniqueDeviceImei(), uniqueDeviceImei()];
    const token = `Bearer ${await signToken()}`;
    // Every connection a resume, the first included: one opened without Last-Event-ID starts at its own
    // moment, and would rightly not be sent what was committed before it.
    const { rows } = await db().query('SELECT coalesce(max(id), 0) AS id FROM events');
    const url = `${stack.url}${EVENTS_PATH}/stream?imei=${devices[0]}&imei=${devices[1]}`;
    const stream = await EventStream.open(
      url,
      { authorization: token, 'last-event-id': String(rows[0].id) },
      { reconnect: true, retryMs: 50 },
    );
    expect(stream.status).toBe(200);
    let ignition = false;
    for (let round = 0; round < 20; round += 1) {
      ignition = !ignition;
      for (const imei of devices) await api.postTrip(fix(imei, { ignition }));
      const connections = stream.connections;
      stream.drop();
      await eventually(() => stream.connections > connections, 10_000, { what: `reconnection ${round + 1}` });
    }
    const storedIds = async () =>
      (await db().query('SELECT id FROM events WHERE imei = ANY($1::text[]) ORDER BY id', [devices])).rows.map((r) => Number(r.id));
    const stored = await eventually(
      async () => {
        const ids = await storedIds();
        return ids.length >= 2 * 19 && stream.ids().length >= ids.length ? ids : undefined;
      },
      30_000,
      { what: 'the stream to receive every event' },
    );
    stream.close();
    expect(stream.ids()).toEqual(stored);
    expect(stream.connections).toBeGreaterThan(20);
  });
});

describe('webhooks', () => {
  test('a receiver failing its first three tries gets the event delivered once more, signed with its secret', async () => {
    const secret = 'webhook-secret-of-this-test';
    const receiver = await startReceiver((attempt) => (attempt < 3 ? 500 : 204));
    const { received } = receiver;
    try {
      const { url } = receiver;
      const created = await api.post(WEBHOOKS_PATH, { url, types: ['geofenceEnter'], secret });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        message: 'Webhook has been created',
        data: { id: expect.any(Number), url, types: ['geofenceEnter'] },
      });

      const imei = uniqueDeviceImei();
      await api.postTrip(fix(imei));
      const entered = await api.postTrip(fix(imei, { ...inside, speed: 10 }));
      await processed(imei, entered);
      const [event] = (await eventsOf(imei)).filter((e) => e.type === 'geofenceEnter');

      await eventually(() => received.length >= 4, 30_000, { what: 'the fourth delivery' });
      const ours = received.filter((r) => r.headers['x-fleet-event-id'] === String(event!.id));
      expect(ours.map((r) => r.status)).toEqual([500, 500, 500, 204]);
      for (const delivery of ours) {
        const timestamp = delivery.headers['x-fleet-timestamp'] as string;
        const expected = createHmac('sha256', secret).update(`${timestamp}.${delivery.body}`).digest('hex');
        expect(delivery.headers['x-fleet-signature']).toBe(`sha256=${expected}`);
        expect(JSON.parse(delivery.body)).toMatchObject({ id: event!.id, type: 'geofenceEnter', imei, positionId: entered });
      }
      await eventually(
        async () => (await db().query('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', [created.body.data.id])).rowCount === 0,
        10_000,
        { what: 'the delivery to be done with' },
      );
      expect((await api.delete(`${WEBHOOKS_PATH}/${created.body.data.id}`)).status).toBe(200);
    } finally {
      receiver.close();
    }
  });

  test('a pending delivery outlives the processor: stopped while its receiver fails, the next one delivers it', async () => {
    let failing = true;
    const receiver = await startReceiver(() => (failing ? 503 : 200));
    try {
      const created = await api.post(WEBHOOKS_PATH, { url: receiver.url, types: ['ignitionOn'], secret: 'restart-test-secret' });
      const imei = uniqueDeviceImei();
      await api.postTrip(fix(imei, { ignition: false }));
      const on = await api.postTrip(fix(imei, { ignition: true }));
      await processed(imei, on);
      await eventually(() => receiver.received.length >= 1, 10_000, { what: 'the first, failed delivery' });

      await stack.eventProcessors.shift()!.stop();
      failing = false;
      const config = eventProcessorConfig(stack.env);
      stack.eventProcessors.push(await startEventProcessor(config, createLogger('event-processor', config.LOG_LEVEL)));

      await eventually(() => receiver.received.some((r) => r.status === 200), 30_000, { what: 'the delivery by the new processor' });
      const ids = new Set(receiver.received.map((r) => r.headers['x-fleet-event-id']));
      expect(ids.size).toBe(1);
      expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ type: 'ignitionOn', imei, positionId: on });
      await api.delete(`${WEBHOOKS_PATH}/${created.body.data.id}`);
    } finally {
      receiver.close();
    }
  });

  test('a receiver that never answers holds one send at a time, and another gets every event meanwhile', async () => {
    // The requests it holds before the first of them times out (after 5 s): once sockets close, the
    // processor's count and this one's differ by the time a close takes to arrive.
    let held = 0;
    let closed = false;
    const hanging = http.createServer((req) => {
      if (!closed) held += 1;
      req.resume();
      req.socket.once('close', () => (closed = true));
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const healthy = await startReceiver(() => 204);
    const types = ['ignitionOn', 'ignitionOff'];
    const created: number[] = [];
    try {
      for (const url of [`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/events`, healthy.url]) {
        created.push((await api.post(WEBHOOKS_PATH, { url, types, secret: 'fairness-test-secret' })).body.data.id);
      }
      // 200 ignition events of one device: far more than either limit, so the hanging receiver is offered
      // more than it may take.
      const imei = uniqueDeviceImei();
      const start = Date.now() - 10 * 60_000;
      const track = Array.from({ length: 201 }, (_, i) => ({
        imei,
        gpsTime: new Date(start + i * 1000).toISOString(),
        ...outside,
        speed: 0,
        ignition: i % 2 === 1,
      }));
      const batch = await api.post(TRIP_LOCATION_BATCH_PATH, track);
      expect(batch.status).toBe(200);
      const ids = await eventually(
        async () => {
          const events = await db().query<{ id: string }>('SELECT id FROM events WHERE imei = $1 AND type = ANY($2)', [imei, types]);
          return events.rowCount === 200 ? events.rows.map((row) => row.id) : undefined;
        },
        20_000,
        { what: 'the 200 ignition events' },
      );

      const ours = new Set(ids);
      const delivered = () => new Set(healthy.received.map((r) => r.headers['x-fleet-event-id'] as string).filter((id) => ours.has(id)));
      await eventually(() => delivered().size === 200, 30_000, { what: 'every event at the receiver that answers' });
      expect(healthy.received.filter((r) => ours.has(r.headers['x-fleet-event-id'] as string))).toHaveLength(200);
      // Never answered, it is never trusted with more sends than one.
      expect(held).toBe(1);
    } finally {
      for (const id of created) await api.delete(`${WEBHOOKS_PATH}/${id}`);
      hanging.closeAllConnections();
      hanging.close();
      healthy.close();
    }
  });

  test('a URL resolving to a private address is refused unless WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const strict = await startGateway(gatewayConfig({ ...stack.env, WEBHOOK_ALLOW_PRIVATE: 'false' }));
    try {
      const client = apiClient(strict.url, api.authorization);
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://[::1]/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest',
      ]) {
        const res = await client.post(WEBHOOKS_PATH, { url, secret: 'long-enough-secret' });
        expect([url, res.status, res.body.code]).toEqual([url, 400, 'E-V1/1-01']);
      }
      const bad = await client.post(WEBHOOKS_PATH, { url: 'ftp://example.com', secret: 'short' });
      expect(bad.status).toBe(400);
      expect(bad.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['secret', 'url']);
    } finally {
      await strict.stop();
    }
  });
});

describe('device management', () => {
  test('a key is rotated and a device removed over HTTP; a device token may do neither', async () => {
    const imei = uniqueDeviceImei();
    const registered = await api.post(DEVICES_PATH, { imei, name: 'Van 3' });
    const rotated = await api.post(`${DEVICES_PATH}/${imei}/key`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toEqual({ imei, name: 'Van 3', key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(rotated.body.data.key).not.toBe(registered.body.data.key);

    const own = api.as(`Bearer ${await signToken({ device_id: imei })}`);
    expect((await own.delete(`${DEVICES_PATH}/${imei}`)).status).toBe(403);
    expect((await own.patch(`${DEVICES_PATH}/${imei}`, { speedLimitKmh: 200 })).status).toBe(403);

    expect((await api.delete(`${DEVICES_PATH}/${imei}`)).status).toBe(200);
    const again = await api.delete(`${DEVICES_PATH}/${imei}`);
    expect([again.status, again.body.code]).toEqual([404, 'E-N1/1-05']);
    expect((await api.post(`${DEVICES_PATH}/${imei}/key`, {})).status).toBe(404);
    expect((await api.patch(`${DEVICES_PATH}/${imei}`, { speedLimitKmh: -5 })).status).toBe(400);
    expect((await api.patch(`${DEVICES_PATH}/${imei}`, { speedLimitKmh: null })).body.data).toEqual({ imei, speedLimitKmh: null });
  });
});

// Live positions over Server-Sent Events, over real HTTP against the real stack: a stream receives each
// committed position of its devices, as the row reads answer it, and nothing of other devices; it resumes after a
// disconnect with Last-Event-ID, with nothing missed or doubled at the seam, whichever gateway and writer
// handled each position, and across a restart of the gateway it streams from.
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { EventStream as Stream } from '../support/event-stream';
import { eventually } from '../support/eventually';
import { apiClient, testClient, type ApiClient } from '../support/api-client';
import { closeKafka } from '../support/kafka';
import { scrape } from '../support/scrape';
import { buildTrip, closeDb, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { FLEET_PATH, TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { REPLAY_MAX_BYTES } from '../../services/gateway/src/positions/position-store';

let stack: Stack;
let auth: { authorization: string };
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'position-stream' });
  api = await testClient(stack);
  auth = { authorization: api.authorization! };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const streamUrl = (...imeis: string[]) => streamUrlOn(stack.url, ...imeis);
const streamUrlOn = (base: string, ...imeis: string[]) =>
  `${base}${FLEET_PATH}/positions/stream?${imeis.map((imei) => `imei=${imei}`).join('&')}`;

const post = (trip: Record<string, unknown>, via = stack.url) =>
  (via === stack.url ? api : apiClient(via, api.authorization)).postTrip(trip);

test('without a token the stream is refused 401 in the usual JSON shape, before it starts', async () => {
  const stream = await Stream.open(streamUrl(uniqueImei()), {});
  expect(stream.status).toBe(401);
  expect(stream.body).toMatchObject({ code: 'E-G1/1-01' });
});

test("a post's position arrives as a position event with the post's id, and nothing of another device", async () => {
  const [followed, other] = [uniqueImei(), uniqueImei()];
  const stream = await Stream.open(streamUrl(followed), auth);
  expect(stream.status).toBe(200);

  await post(buildTrip({ imei: other }));
  const trip = buildTrip({ imei: followed });
  const id = await post(trip);

  await eventually(() => stream.events.length >= 1, 10_000, { what: 'the position event' });
  expect(stream.events[0]).toMatchObject({ event: 'position', data: { id, imei: followed, latitude: trip.latitude } });
  // The event's id is the stream's cursor, which a reconnection sends back as Last-Event-ID.
  expect(stream.events[0]!.id).toMatch(/^c1\.[0-9a-z]+\.0\.[0-9a-z]+-[0-9a-z]+$/);
  expect(stream.events.every((received) => received.data.imei === followed)).toBe(true);
  stream.close();
});

test('a batch is one event per position, in order', async () => {
  const imei = uniqueImei();
  const stream = await Stream.open(streamUrl(imei), auth);
  const start = Date.now() - 600_000;
  const trips = Array.from({ length: 5 }, (_, i) => buildTrip({ imei, gpsTime: new Date(start + i * 1000).toISOString() }));
  const res = await postJson(`${stack.url}${TRIP_LOCATION_BATCH_PATH}`, trips, auth);
  expect(res.status).toBe(200);
  const ids = res.body.data.items.map((item: { id: number }) => item.id);

  await eventually(() => stream.events.length >= 5, 10_000, { what: 'five position events' });
  expect(stream.events.map((received) => received.data.id)).toEqual(ids);
  stream.close();
});

test("a batch from many devices reaches each device's streams, every position once and in order, and nothing of the others", async () => {
  const devices = Array.from({ length: 30 }, () => uniqueImei());
  const all = await Stream.open(streamUrl(...devices.slice(0, 20)), auth);
  const one = await Stream.open(streamUrl(devices[25]!), auth);
  const start = Date.now() - 600_000;
  // Two positions of each device, the devices interleaved, as an aggregator forwards them.
  const trips = [0, 1].flatMap((second) =>
    devices.map((imei) => buildTrip({ imei, gpsTime: new Date(start + second * 1000).toISOString() })),
  );
  const res = await postJson(`${stack.url}${TRIP_LOCATION_BATCH_PATH}`, trips, auth);
  expect(res.status).toBe(200);
  const ids: number[] = res.body.data.items.map((item: { id: number }) => item.id);
  const idsOf = (imei: string) => ids.filter((_, index) => trips[index]!.imei === imei);

  await eventually(() => all.events.length >= 40 && one.events.length >= 2, 10_000, { what: 'the followed devices’ 42 position events' });
  for (const imei of devices.slice(0, 20)) {
    expect(all.events.filter((received) => received.data.imei === imei).map((received) => received.data.id)).toEqual(idsOf(imei));
  }
  expect(all.events).toHaveLength(40);
  expect(one.events.map((received) => received.data.id)).toEqual(idsOf(devices[25]!));
  all.close();
  one.close();
});

test('reconnecting with Last-Event-ID replays what was stored meanwhile, then goes on live, nothing missed or sent twice', async () => {
  const imei = uniqueImei();
  const first = await Stream.open(streamUrl(imei), auth);
  const a = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString() }));
  await eventually(() => first.events.length >= 1, 10_000, { what: 'the first event' });
  first.close();

  const missed = [
    await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 50_000).toISOString() })),
    await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 40_000).toISOString() })),
  ];
  expect(first.ids()).toEqual([a]);
  const again = await Stream.open(streamUrl(imei), { ...auth, 'last-event-id': first.events[0]!.id });
  await eventually(() => again.events.length >= 2, 10_000, { what: 'the replayed events' });
  const live = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 30_000).toISOString() }));
  await eventually(() => again.events.length >= 3, 10_000, { what: 'the live event after the replay' });

  expect(again.events.map((received) => received.data.id)).toEqual([...missed, live]);
  again.close();
});

test('a stream resumed with a plain row id, as streams sent before cursors, replays what was stored after it', async () => {
  const imei = uniqueImei();
  const a = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString() }));
  const b = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 50_000).toISOString() }));
  const again = await Stream.open(streamUrl(imei), { ...auth, 'last-event-id': String(a) });
  await eventually(() => again.events.length >= 1, 10_000, { what: 'the replayed event' });
  expect(again.ids()).toEqual([b]);
  again.close();
});

test('a resume from before 100 positions of 15 KB each replays them in parts of about REPLAY_MAX_BYTES, each connection ending cleanly, every one once', async () => {
  const imei = uniqueImei();
  const start = Date.now() - 10 * 60_000;
  const ids: number[] = [];
  for (let index = 0; index < 100; index += 1) {
    ids.push(
      await post(buildTrip({ imei, gpsTime: new Date(start + index * 1000).toISOString(), attributes: { note: 'x'.repeat(15_000) } })),
    );
  }

  const cutBefore = (await scrape(`${stack.url}/metrics`)).value('fleet_gateway_streams_cut_total');
  const again = await Stream.open(streamUrl(imei), { ...auth, 'last-event-id': String(ids[0]! - 1) }, { reconnect: true, retryMs: 10 });
  await eventually(() => again.events.length >= ids.length, 30_000, { what: 'every position replayed' });
  again.close();

  expect(again.ids()).toEqual(ids);
  // 1.5 MB of positions, at most REPLAY_MAX_BYTES a connection: a replay written whole had the stream cut
  // as a slow client's before it was read, and read every position at once into the gateway's memory.
  expect(again.connections).toBeGreaterThanOrEqual(Math.ceil((100 * 15_000) / REPLAY_MAX_BYTES));
  expect((await scrape(`${stack.url}/metrics`)).value('fleet_gateway_streams_cut_total')).toBe(cutBefore);
});

test('a late upload of fixes days old, committed while the client was away, is replayed on resume as it would have been sent live', async () => {
  const imei = uniqueImei();
  const first = await Stream.open(streamUrl(imei), auth);
  await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString() }));
  await eventually(() => first.events.length >= 1, 10_000, { what: 'the first event' });
  first.close();

  const days = (count: number) => new Date(Date.now() - count * 86_400_000).toISOString();
  const late = await postJson(
    `${stack.url}${TRIP_LOCATION_BATCH_PATH}`,
    [3, 2, 5].map((age) => buildTrip({ imei, gpsTime: days(age) })),
    auth,
  );
  expect(late.status).toBe(200);
  const again = await Stream.open(streamUrl(imei), { ...auth, 'last-event-id': first.events[0]!.id });
  await eventually(() => again.events.length >= 3, 10_000, { what: 'the late fixes replayed' });

  // In the order they were committed.
  expect(again.ids()).toEqual(late.body.data.items.map((item: { id: number }) => item.id).sort((a: number, b: number) => a - b));
  again.close();
});

test('a device-bound token streams only its own device: another is 403', async () => {
  const gateway: Gateway = await startGateway(gatewayConfig({ ...stack.env, JWT_DEVICE_CLAIM: 'imei' }));
  try {
    const token = { authorization: `Bearer ${await signToken({ imei: 'own-device' })}` };
    const refused = await Stream.open(`${gateway.url}${FLEET_PATH}/positions/stream?imei=someone-else`, token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'E-G1/1-03' });
  } finally {
    await gateway.stop();
  }
});

test('past MAX_STREAMS a new stream of either route is answered 503; a gateway stopping ends its streams cleanly', async () => {
  const gateway: Gateway = await startGateway(gatewayConfig({ ...stack.env, MAX_STREAMS: '2' }));
  const positions = `${gateway.url}${FLEET_PATH}/positions/stream?imei=${uniqueImei()}`;
  const events = `${gateway.url}${FLEET_PATH}/events/stream`;
  const held = [await Stream.open(positions, auth), await Stream.open(events, auth)];
  try {
    expect(held.map((stream) => stream.status)).toEqual([200, 200]);

    // The two routes' streams hold the same memory and sockets: the cap counts them together.
    for (const url of [positions, events]) {
      const refused = await Stream.open(url, auth);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'E-S1/1-07', detail: expect.stringContaining('MAX_STREAMS') });
    }
  } finally {
    await gateway.stop();
  }
  await eventually(() => held.every((stream) => stream.ended), 10_000, { what: 'the streams to end with their gateway' });
});

test('past MAX_STREAMS_PER_SUBJECT one subject is answered 429 on either route, while other subjects still open streams', async () => {
  const gateway: Gateway = await startGateway(gatewayConfig({ ...stack.env, MAX_STREAMS_PER_SUBJECT: '2' }));
  const bearer = async (subject: string) => ({ authorization: `Bearer ${await signToken({}, { subject })}` });
  const greedy = await bearer(`greedy-${uniqueImei()}`);
  const positions = `${gateway.url}${FLEET_PATH}/positions/stream?imei=${uniqueImei()}`;
  const events = `${gateway.url}${FLEET_PATH}/events/stream`;
  try {
    const held = [await Stream.open(positions, greedy), await Stream.open(events, greedy)];
    expect(held.map((stream) => stream.status)).toEqual([200, 200]);

    for (const url of [positions, events]) {
      const refused = await fetch(url, { headers: greedy });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ code: 'E-R1/1-03', detail: expect.stringContaining('MAX_STREAMS_PER_SUBJECT') });
    }

    const other = await bearer(`other-${uniqueImei()}`);
    const others = [await Stream.open(positions, other), await Stream.open(events, other)];
    expect(others.map((stream) => stream.status)).toEqual([200, 200]);

    // A stream closed by its client gives its place back, to either route.
    held[0]!.close();
    await eventually(async () => (await Stream.open(events, greedy)).status === 200, 10_000, {
      what: 'a place freed by a closed stream',
    });
  } finally {
    await gateway.stop();
  }
});

test('with two gateways and two writers, a stream on either gateway gets every position of its devices, whichever handled it', async () => {
  const second: Gateway = await startGateway(gatewayConfig(stack.env));
  const writer = await stack.addTripWriter();
  try {
    const devices = Array.from({ length: 24 }, () => uniqueImei());
    const [onFirst, onSecond] = await Promise.all([
      Stream.open(streamUrlOn(stack.url, ...devices), auth),
      Stream.open(streamUrlOn(second.url, ...devices), auth),
    ]);
    const writers = [stack.tripWriters[0]!, writer];
    const inserted = () =>
      Promise.all(
        writers.map(async (w) => (await scrape(`http://127.0.0.1:${w.metricsPort}/metrics`)).value('fleet_writer_rows_inserted_total')),
      );
    const insertedBefore = await inserted();

    // A round posts one position per device, alternating gateways, until each writer has stored some: the
    // added writer takes over part of the devices' partitions once the group has rebalanced.
    const ids: number[] = [];
    await eventually(
      async () => {
        for (const [i, imei] of devices.entries()) ids.push(await post(buildTrip({ imei }), i % 2 === 0 ? stack.url : second.url));
        const now = await inserted();
        return now.every((count, i) => count > insertedBefore[i]!);
      },
      30_000,
      { what: 'both writers to store positions of the streamed devices', intervalMs: 200 },
    );

    for (const stream of [onFirst, onSecond]) {
      await eventually(() => stream.events.length >= ids.length, 10_000, { what: `${ids.length} events on each stream` });
      expect(stream.ids().sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    }
    onFirst.close();
    onSecond.close();
  } finally {
    await second.stop();
    const added = stack.tripWriters.indexOf(writer);
    stack.tripWriters.splice(added, 1);
    await writer.stop();
  }
});

test("a stream survives its gateway's restart: it reconnects with Last-Event-ID and gets what was stored meanwhile, once", async () => {
  const imei = uniqueImei();
  let gateway: Gateway = await startGateway(gatewayConfig(stack.env));
  const port = new URL(gateway.url).port;
  const stream = await Stream.open(streamUrlOn(gateway.url, imei), auth, { reconnect: true, retryMs: 100 });
  try {
    const before = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString() }));
    await eventually(() => stream.events.length >= 1, 10_000, { what: 'the event before the restart' });

    await gateway.stop();
    // Stored through another gateway while this one is down.
    const whileDown = [
      await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 50_000).toISOString() })),
      await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 40_000).toISOString() })),
    ];
    gateway = await startGateway(gatewayConfig({ ...stack.env, PORT: port }));
    await eventually(() => stream.events.length >= 3, 15_000, { what: 'the replay after the reconnection' });
    const after = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 30_000).toISOString() }));
    await eventually(() => stream.events.length >= 4, 10_000, { what: 'the live event after the reconnection' });

    expect(stream.ids()).toEqual([before, ...whileDown, after]);
    expect(stream.connections).toBeGreaterThanOrEqual(2);
  } finally {
    stream.close();
    await gateway.stop();
  }
});

test('only what is stored reaches a stream: a refused post, the refused positions of a batch and a resend of a stored one never appear', async () => {
  const imei = uniqueImei();
  const stream = await Stream.open(streamUrl(imei), auth);
  const start = Date.now() - 300_000;
  const at = (second: number) => new Date(start + second * 1000).toISOString();

  expect((await postJson(`${stack.url}${TRIP_LOCATION_PATH}`, buildTrip({ imei, gpsTime: at(0), latitude: 91 }), auth)).status).toBe(400);
  const first = buildTrip({ imei, gpsTime: at(1) });
  const firstId = await post(first);
  const batch = await postJson(
    `${stack.url}${TRIP_LOCATION_BATCH_PATH}`,
    [
      buildTrip({ imei, gpsTime: at(2), latitude: 91 }),
      buildTrip({ imei, gpsTime: at(3) }),
      buildTrip({ imei, gpsTime: at(4), speed: -1 }),
    ],
    auth,
  );
  expect(batch.body.data).toMatchObject({ accepted: 1, rejected: 2 });
  const batchId = batch.body.data.items[1].id as number;
  // The device sends its first position again: the same row answers, and nothing new is announced.
  expect(await post(first)).toBe(firstId);
  // A last position, so that everything before it has had its chance to arrive.
  const lastId = await post(buildTrip({ imei, gpsTime: at(5) }));

  await eventually(() => stream.ids().includes(lastId), 10_000, { what: 'the last position on the stream' });
  expect(stream.ids()).toEqual([firstId, batchId, lastId]);
  stream.close();
});

import { gzipSync } from 'node:zlib';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { closeKafka, messagesIn, readTopic } from '../support/kafka';
import { buildTrip, closeDb, db, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { testClient, type ApiClient, type Answer } from '../support/api-client';

const BATCH_PATH = TRIP_LOCATION_BATCH_PATH;
const SINGLE_PATH = TRIP_LOCATION_PATH;

let stack: Stack;
let api: ApiClient;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'trip-batch' });
  api = await testClient(stack);
  auth = { authorization: api.authorization! };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const commandsOfSingle = (message: { value: string | undefined }) => (JSON.parse(message.value!) as { gpsTime: string }).gpsTime;

const ndjson = (trips: unknown[]) => `${trips.map((trip) => JSON.stringify(trip)).join('\n')}\n`;

const postNdjson = (body: string | Buffer, headers: Record<string, string> = {}) =>
  api.post(BATCH_PATH, body, { 'content-type': 'application/x-ndjson', ...headers });

async function storedRows(imeis: unknown[]) {
  const result = await db().query('SELECT * FROM trip_locations WHERE imei = ANY($1::text[]) ORDER BY id', [[...new Set(imeis)]]);
  return result.rows;
}

/** One device's positions a second apart, in order. */
function track(count: number, imei = uniqueImei()): Array<Record<string, unknown>> {
  const start = Date.now() - 86_400_000 - Math.floor(Math.random() * 1e6) * 1000;
  return Array.from({ length: count }, (_, i) =>
    buildTrip({ imei, gpsTime: new Date(start + i * 1000).toISOString(), latitude: -6 - i / 10_000, speed: i % 90 }),
  );
}

/** The row a position becomes: every column as the client sent it. */
function expectedRow(trip: Record<string, unknown>, id: number) {
  return {
    id: String(id),
    imei: trip.imei,
    gps_time: new Date(String(trip.gpsTime)),
    latitude: trip.latitude,
    longitude: trip.longitude,
    speed: trip.speed,
    ignition: trip.ignition,
    angle: trip.angle ?? null,
    satellite: trip.satellite ?? null,
    door1: trip.door1 ?? null,
    door2: trip.door2 ?? null,
    temp: trip.temp ?? null,
    fuel_percentage: trip.fuel_percentage ?? null,
  };
}

async function expectStoredAsSent(trips: Array<Record<string, unknown>>, items: Array<{ index: number; id: number }>) {
  const rows = await storedRows(trips.map((trip) => trip.imei));
  const byId = new Map(rows.map((row) => [row.id, row]));
  expect(rows).toHaveLength(trips.length);
  for (const item of items) expect(byId.get(String(item.id))).toMatchObject(expectedRow(trips[item.index]!, item.id));
}

const okItems = (body: any) => body.data.items as Array<{ index: number; id: number }>;

describe('storing', () => {
  test('a JSON array is stored with every field as sent, and answered in request order with the row ids', async () => {
    const trips = [...track(2), ...track(1), buildTrip({ angle: undefined, temp: undefined, door1: undefined })];
    const res = await api.post(BATCH_PATH, trips);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'Trip locations have been processed',
      data: {
        accepted: 4,
        rejected: 0,
        items: [0, 1, 2, 3].map((index) => ({ index, id: expect.any(Number) })),
      },
    });
    expect(new Set(okItems(res.body).map((item) => item.id)).size).toBe(4);
    await expectStoredAsSent(trips, okItems(res.body));
  });

  test('NDJSON, one position per line, blank lines and CRLF ignored, is stored as a JSON array is', async () => {
    const trips = track(3);
    const body = `${JSON.stringify(trips[0])}\r\n\r\n${JSON.stringify(trips[1])}\n   \n${JSON.stringify(trips[2])}`;
    const res = await postNdjson(body);

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ accepted: 3, rejected: 0, items: [0, 1, 2].map((index) => ({ index, id: expect.any(Number) })) });
    await expectStoredAsSent(trips, okItems(res.body));
  });

  test('a gzipped JSON array and a gzipped NDJSON body are read and stored', async () => {
    const asJson = track(2);
    const json = await api.post(BATCH_PATH, gzipSync(JSON.stringify(asJson)), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      ...auth,
    });
    expect(json.status).toBe(200);
    expect(json.body.data.accepted).toBe(2);
    await expectStoredAsSent(asJson, okItems(json.body));

    const asNdjson = track(2);
    const lines = await postNdjson(gzipSync(ndjson(asNdjson)), { 'content-encoding': 'gzip' });
    expect(lines.status).toBe(200);
    expect(lines.body.data.accepted).toBe(2);
    await expectStoredAsSent(asNdjson, okItems(lines.body));
  });

  test('invalid positions are answered at their index with the error a single post gets, and only the valid ones are stored', async () => {
    const imei = uniqueImei();
    const track5 = track(5, imei);
    const trips: unknown[] = [
      track5[0],
      { ...track5[1], latitude: 91 },
      'position',
      { ...track5[3], imei: undefined, speed: -1 },
      track5[4],
    ];

    const res = await api.post(BATCH_PATH, trips);

    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(2);
    expect(res.body.data.rejected).toBe(3);
    const items = res.body.data.items;
    expect(items.map((item: { index: number }) => item.index)).toEqual([0, 1, 2, 3, 4]);
    expect(items[0]).toEqual({ index: 0, id: expect.any(Number) });
    expect(items[4]).toEqual({ index: 4, id: expect.any(Number) });
    for (const index of [1, 3]) {
      const single = await api.post(SINGLE_PATH, trips[index]);
      expect(single.status).toBe(400);
      expect(items[index]).toEqual({ index, error: single.body });
    }
    expect(items[1].error).toMatchObject({ code: 'E-V1/1-01', detail: expect.stringMatching(/^latitude: /) });
    expect(items[3].error.issues.map((issue: { path: string }) => issue.path)).toEqual(['imei', 'speed']);
    expect(items[2]).toEqual({
      index: 2,
      error: {
        code: 'E-V1/1-01',
        message: 'The request body is invalid',
        detail: 'body: Expected object, received string',
        issues: [{ path: '', code: 'invalid_type', message: 'Expected object, received string' }],
      },
    });

    const rows = await storedRows([imei]);
    expect(rows.map((row) => Number(row.id))).toEqual([items[0].id, items[4].id]);
    expect(rows.map((row) => row.gps_time.toISOString())).toEqual([track5[0]!.gpsTime, track5[4]!.gpsTime]);
  });

  test('a position repeated inside one batch answers one id and is stored once', async () => {
    const [trip, other] = track(2);
    // The same instant written as epoch milliseconds is the same position.
    const again = { ...trip, gpsTime: Date.parse(String(trip!.gpsTime)) };
    const res = await api.post(BATCH_PATH, [trip, other, again, trip]);

    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(4);
    const ids = okItems(res.body).map((item) => item.id);
    expect(ids[2]).toBe(ids[0]);
    expect(ids[3]).toBe(ids[0]);
    expect(ids[1]).not.toBe(ids[0]);
    await expectStoredAsSent([trip!, other!], [okItems(res.body)[0]!, okItems(res.body)[1]!]);
  });

  test('a batch re-sent, or holding a position stored by a single post, answers the existing ids and stores nothing twice', async () => {
    const trips = track(5);
    const single = await api.post(SINGLE_PATH, trips[2]);
    expect(single.status).toBe(200);

    const first = await api.post(BATCH_PATH, trips);
    expect(first.status).toBe(200);
    expect(okItems(first.body)[2]!.id).toBe(single.body.data.id);

    const again = await postNdjson(ndjson(trips));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    await expectStoredAsSent(trips, okItems(first.body));
  });

  test("a batch's positions bound for one partition travel as one message, each device's in its order, where its single posts go", async () => {
    const topic = `${stack.prefix}.trip-locations`;
    const devices = Array.from({ length: 30 }, () => track(2));
    // Interleaved, as an aggregator forwards them: a, b, c, ..., then each device's second position.
    const trips = [...devices.map((positions) => positions[0]!), ...devices.map((positions) => positions[1]!)];
    const imeis = new Set(devices.map((positions) => String(positions[0]!.imei)));
    const before = await messagesIn(topic);

    const res = await api.post(BATCH_PATH, trips);
    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(60);
    // One more post of a device, which the producer places by its key alone.
    const single = buildTrip({ imei: devices[0]![0]!.imei, gpsTime: new Date(Date.now() - 3_600_000).toISOString() });
    expect((await api.post(SINGLE_PATH, single)).status).toBe(200);

    const published = await readTopic(topic, await messagesIn(topic));
    const lists = published.filter((message) => message.value!.startsWith('['));
    const commandsOf = (message: { value: string | undefined }) => JSON.parse(message.value!) as Array<{ imei: string; gpsTime: string }>;
    const ours = lists.filter((message) => commandsOf(message).some((command) => imeis.has(command.imei)));
    const partitionOf = new Map<string, number>();
    const timesOf = new Map<string, string[]>();
    for (const message of ours) {
      for (const { imei, gpsTime } of commandsOf(message)) {
        // A device is never split between two messages, and a message holds a single partition's devices.
        expect({ imei, partition: partitionOf.get(imei) ?? message.partition }).toEqual({ imei, partition: message.partition });
        partitionOf.set(imei, message.partition);
        timesOf.set(imei, [...(timesOf.get(imei) ?? []), gpsTime]);
      }
    }
    expect(ours).toHaveLength(new Set(partitionOf.values()).size);
    expect(ours.length).toBeLessThan(imeis.size);
    expect(published).toHaveLength(before + ours.length + 1);
    for (const positions of devices) {
      const imei = String(positions[0]!.imei);
      expect({ imei, times: timesOf.get(imei) }).toEqual({ imei, times: positions.map((trip) => trip.gpsTime) });
    }
    const singlePost = published.find((message) => !message.value!.startsWith('[') && commandsOfSingle(message) === single.gpsTime);
    expect(singlePost?.partition).toBe(partitionOf.get(String(single.imei)));
  });

  test('a batch of 1,000 positions is stored exactly once, each device in the order it sent', async () => {
    const devices = Array.from({ length: 10 }, () => track(100));
    // Interleaved, as an aggregator in front of many devices uploads them.
    const trips = Array.from({ length: 1000 }, (_, i) => devices[i % 10]![Math.floor(i / 10)]!);
    const res = await api.post(BATCH_PATH, gzipSync(JSON.stringify(trips)), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      ...auth,
    });

    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(1000);
    expect(res.body.data.rejected).toBe(0);
    const items = okItems(res.body);
    expect(items.map((item) => item.index)).toEqual(trips.map((_, index) => index));
    expect(new Set(items.map((item) => item.id)).size).toBe(1000);
    await expectStoredAsSent(trips, items);

    for (const imei of devices.map((device) => device[0]!.imei)) {
      const ids = items.filter((item) => trips[item.index]!.imei === imei).map((item) => item.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }

    const again = await api.post(BATCH_PATH, trips);
    expect(again.status).toBe(200);
    expect(okItems(again.body)).toEqual(items);
    expect(await storedRows(trips.map((trip) => trip.imei))).toHaveLength(1000);
  });
});

describe('large batches together', () => {
  let lingering: Gateway;
  beforeAll(async () => {
    // A gateway that sends a produce at most once a second: the batches below that arrive behind the first
    // gather meanwhile, to be sent together.
    lingering = await startGateway(gatewayConfig({ ...stack.env, PORT: '0', KAFKA_LINGER_MS: '1000' }));
  });
  afterAll(() => lingering?.stop());

  test('are all stored: one produce never carries more for a partition than the broker takes', async () => {
    const imei = uniqueImei();
    const attributes = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`io${i}`, 'x'.repeat(24)]));
    // Four batches of one device (one partition), about 650 KB each: together they pass, four times over,
    // the 1 MB the broker takes for a partition in one produce.
    const positions = track(4000, imei).map((trip) => ({ ...trip, attributes }));
    const batches = [0, 1, 2, 3].map((part) => positions.slice(part * 1000, (part + 1) * 1000));

    const answers = await Promise.all(batches.map((batch) => postJson(`${lingering.url}${BATCH_PATH}`, batch, auth)));

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(await storedRows([imei])).toHaveLength(4000);
  });
});

describe('a batch that grows past a message once normalised', () => {
  /**
   * 1,000 positions of one device in just under BODY_LIMIT (1 MiB), written as tersely as the API takes
   * them (epoch seconds, ignition as 0): normalised, with each one's receivedAt, they pass the 1 MB the
   * broker takes in one message.
   */
  function terseBatch(imei: string): string {
    const start = Math.floor(Date.now() / 1000) - 86_400 - Math.floor(Math.random() * 1e5);
    const padding = 'x'.repeat(920);
    const lines = Array.from(
      { length: 1000 },
      (_, i) =>
        `{"imei":"${imei}","gpsTime":${start + i},"latitude":0,"longitude":0,"speed":0,"ignition":0,"attributes":{"p":"${padding}"}}`,
    );
    return `[${lines.join(',')}]`;
  }

  test('is stored whole, and other devices posting meanwhile are answered 200', async () => {
    const imeis = Array.from({ length: 5 }, () => uniqueImei());
    const bodies = imeis.map(terseBatch);
    for (const body of bodies) expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const others = Array.from({ length: 12 }, () => buildTrip());

    const [batches, singles] = await Promise.all([
      Promise.all(bodies.map((body) => api.post(BATCH_PATH, body))),
      Promise.all(others.map((trip) => api.post(SINGLE_PATH, trip))),
    ]);

    expect(batches.map((answer) => [answer.status, answer.body?.data?.accepted])).toEqual(imeis.map(() => [200, 1000]));
    expect(singles.map((answer) => answer.status)).toEqual(others.map(() => 200));
    for (const imei of imeis) expect(await storedRows([imei])).toHaveLength(1000);
    const after = await api.post(SINGLE_PATH, buildTrip());
    expect(after.status).toBe(200);
  });
});

describe('refusals store and publish nothing', () => {
  async function expectRefused(send: () => Promise<Answer>, status: number, body: Record<string, unknown>, imeis: unknown[] = []) {
    const before = await messagesIn(`${stack.prefix}.trip-locations`);
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject(body);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['code', 'message']));
    expect(await messagesIn(`${stack.prefix}.trip-locations`)).toBe(before);
    if (imeis.length) expect(await storedRows(imeis)).toHaveLength(0);
  }

  const invalidBody = (detail: string) => ({ code: 'E-V1/1-01', message: 'The request body is invalid', detail });

  test('without a token, responds 401 E-G1/1-01', async () => {
    const trips = track(2);
    await expectRefused(
      () => api.as(undefined).post(BATCH_PATH, trips),
      401,
      { code: 'E-G1/1-01', message: 'Authentication token is required' },
      [trips[0]!.imei],
    );
  });

  test('with an expired or malformed token, responds 400 E-V1/1-03 as the single route does', async () => {
    const trips = track(2);
    const expired = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    await expectRefused(
      () => api.as(`Bearer ${expired}`).post(BATCH_PATH, trips),
      400,
      { code: 'E-V1/1-03', message: 'An error occurred while executing the query', detail: 'Context creation failed: jwt expired' },
      [trips[0]!.imei],
    );
    await expectRefused(() => postNdjson(ndjson(trips), { authorization: 'Bearer not-a-jwt' }), 400, {
      code: 'E-V1/1-03',
      detail: 'Context creation failed: jwt malformed',
    });
  });

  test('another content type responds 415 JSON', async () => {
    const trips = track(1);
    await expectRefused(
      () => api.post(BATCH_PATH, JSON.stringify(trips), { 'content-type': 'text/plain', ...auth }),
      415,
      { code: 'E-V1/1-04' },
      [trips[0]!.imei],
    );
    await expectRefused(() => api.post(BATCH_PATH, 'imei=1', { 'content-type': 'application/x-www-form-urlencoded', ...auth }), 415, {
      code: 'E-V1/1-04',
    });
  });

  test('an empty batch responds 400, as JSON and as NDJSON', async () => {
    await expectRefused(() => api.post(BATCH_PATH, []), 400, invalidBody('body: Must hold at least 1 position'));
    await expectRefused(() => postNdjson('\n\n'), 400, invalidBody('body: Must hold at least 1 position'));
  });

  test('more than 1,000 positions responds 400 and stores none of them', async () => {
    const trips = track(1001);
    await expectRefused(() => api.post(BATCH_PATH, trips), 400, invalidBody('body: Must hold at most 1000 positions'), [trips[0]!.imei]);
    await expectRefused(() => postNdjson(ndjson(trips)), 400, invalidBody('body: Must hold at most 1000 positions'), [trips[0]!.imei]);
  });

  test('a JSON body that is not an array (a single position) responds 400', async () => {
    const trip = buildTrip();
    await expectRefused(() => api.post(BATCH_PATH, trip), 400, invalidBody('body: Expected an array of trip locations'), [trip.imei]);
  });

  test('malformed JSON responds 400 E-V1/1-02', async () => {
    await expectRefused(() => api.post(BATCH_PATH, '[{"imei": "1",'), 400, {
      code: 'E-V1/1-02',
      message: 'The request body could not be parsed',
      detail: 'the body is not valid JSON',
    });
  });

  test('NDJSON with a line that is not JSON responds 400 naming the line, and stores the valid lines neither', async () => {
    const trips = track(3);
    const body = `${JSON.stringify(trips[0])}\n\n{"imei": \n${JSON.stringify(trips[2])}\n`;
    await expectRefused(
      () => postNdjson(body),
      400,
      { code: 'E-V1/1-02', message: 'The request body could not be parsed', detail: 'line 3 is not valid JSON' },
      [trips[0]!.imei],
    );
  });

  test('a body over the limit responds 413, and so does a small gzipped body that inflates over it', async () => {
    const trips = track(1).map((trip): Record<string, unknown> => ({ ...trip, padding: 'x'.repeat(1024 * 1024) }));
    await expectRefused(() => api.post(BATCH_PATH, trips), 413, { code: 'E-V1/1-05' }, [trips[0]!.imei]);

    const bomb = gzipSync(JSON.stringify(trips));
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expectRefused(
      () => api.post(BATCH_PATH, bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip', ...auth }),
      413,
      { code: 'E-V1/1-05' },
      [trips[0]!.imei],
    );
    await expectRefused(() => postNdjson(gzipSync(ndjson(trips)), { 'content-encoding': 'gzip' }), 413, { code: 'E-V1/1-05' }, [
      trips[0]!.imei,
    ]);
  });
});

describe('without a reply in time', () => {
  let silent: Stack;
  beforeAll(async () => {
    // No trip-writer yet: the commands are published, and nothing answers them.
    silent = await startStack({ mode: 'in-process', label: 'trip-batch-timeout', tripWriters: 0, env: { REPLY_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => {
    await silent?.stop();
  });

  test('responds 503 with Retry-After, and the same batch re-sent once a writer runs stores each position once', async () => {
    const trips = [...track(3), ...track(2)];
    const target = `${silent.url}${BATCH_PATH}`;

    const unanswered = await postJson(target, trips, auth);
    expect(unanswered.status).toBe(503);
    expect(unanswered.headers.get('retry-after')).toBe('1');
    expect(unanswered.body).toMatchObject({ code: 'E-S1/1-02', message: 'The write was not confirmed in time, retry later' });

    await silent.addTripWriter();
    // As a client does: re-send after Retry-After until the writer, still joining its group, answers.
    let retried = await postJson(target, trips, auth);
    for (let attempt = 0; retried.status === 503 && attempt < 30; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, Number(retried.headers.get('retry-after')) * 1000));
      retried = await postJson(target, trips, auth);
    }
    expect(retried.status).toBe(200);
    expect(retried.body.data.accepted).toBe(5);
    await expectStoredAsSent(trips, okItems(retried.body));
  });
});

import { scrape } from '../support/scrape';
import { eventually } from '../support/eventually';
import { boundedWait } from '../support/deadline';
import { closeKafka, createTopic, groupLag, produceRaw, readTopic } from '../support/kafka';
import { buildTrip, closeDb, db, postJson, signToken, startWriter, uniqueImei, type Stack } from '../support/harness';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { createPartition, dayOf } from '../../services/trip-writer/src/trip-partitions';
import { storeTripLocations } from '../../services/trip-writer/src/trip-store';

let stack: Stack;
let url: string;
let auth: { authorization: string };

// Each test here changes the consumer group's membership; on the development broker a rebalance can
// take up to half a minute, and requests posted meanwhile wait for it.
jest.setTimeout(120_000);

beforeAll(async () => {
  // A long reply timeout: requests posted while no writer runs wait for the next one.
  stack = await startStack({ mode: 'in-process', label: 'writers', env: { REPLY_TIMEOUT_MS: '60000' } });
  url = `${stack.url}${TRIP_LOCATION_PATH}`;
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function rowsFor(imeis: string[]) {
  const result = await db().query('SELECT id, imei, gps_time FROM trip_locations WHERE imei = ANY($1)', [imeis]);
  return result.rows;
}

test('a message a writer cannot decode goes to the dead-letter topic with its reason, and consumption goes on', async () => {
  await produceRaw(`${stack.prefix}.trip-locations`, [
    { key: 'poison', value: '{"imei": 42' },
    { key: 'poison', value: JSON.stringify({ imei: 'x', latitude: 200 }) },
  ]);
  const dead = await readTopic(`${stack.prefix}.dead-letter`, 2, 60_000);
  expect(dead).toHaveLength(2);
  expect(dead.map((message) => message.value)).toEqual(['{"imei": 42', JSON.stringify({ imei: 'x', latitude: 200 })]);
  expect(dead[0]!.headers['dead-letter-reason']).toMatch(/^not JSON/);
  expect(dead[1]!.headers['dead-letter-reason']).toMatch(/^invalid command: /);
  expect(dead[0]!.headers['dead-letter-source']).toMatch(new RegExp(`^${stack.prefix}\\.trip-locations/\\d+/\\d+$`));

  const after = await postJson(url, buildTrip({ imei: 'poison' }), auth);
  expect(after.status).toBe(200);
});

test('a list of commands is stored and answered as one message; with one the database refuses, it is also dead-lettered once, whole', async () => {
  const replyTopic = `${stack.prefix}.list-replies`;
  await createTopic(replyTopic);
  const now = new Date().toISOString();
  const imei = uniqueImei();
  const stored = { ...buildTrip({ imei }), gpsTime: now, receivedAt: now };
  const refused = { ...stored, gpsTime: '0000-01-01T00:00:00.000Z' };
  const value = JSON.stringify([stored, refused]);
  await produceRaw(`${stack.prefix}.trip-locations`, [
    { key: imei, value, headers: { 'correlation-id': 'list-1', 'reply-topic': replyTopic } },
  ]);

  const [reply] = await readTopic(replyTopic, 1, 30_000);
  const [row] = await rowsFor([imei]);
  expect(JSON.parse(reply!.value!)).toEqual([
    {
      correlationId: 'list-1',
      replies: [
        { ok: true, id: Number(row.id), duplicate: false, information: expect.any(String) },
        { ok: false, code: 'E-V1/1-01', message: 'The request body is invalid', detail: 'a value of this request cannot be stored' },
      ],
    },
  ]);
  const letters = (await readTopic(`${stack.prefix}.dead-letter`, Number.MAX_SAFE_INTEGER, 5000)).filter(
    (letter) => letter.value === value,
  );
  expect(letters).toHaveLength(1);
  expect(letters[0]!.headers['dead-letter-reason']).toMatch(/^1 of 2 commands refused by the database: /);
});

test('once posts stop, the writers commit what they stored: the group has no lag left', async () => {
  const responses = await Promise.all(Array.from({ length: 50 }, () => postJson(url, buildTrip(), auth)));
  expect(responses.every((res) => res.status === 200)).toBe(true);
  const group = `${stack.prefix}.trip-writer`;
  const topic = `${stack.prefix}.trip-locations`;
  await eventually(async () => (await groupLag(group, topic)) === 0, 10_000, { what: 'the group lag to fall to 0', intervalMs: 250 });
  expect(await groupLag(group, topic)).toBe(0);
});

test('a backlog stored at once is committed and announced whole, though its announcements outweigh what the broker takes in one produce', async () => {
  const imei = uniqueImei();
  const start = Date.now() - 2 * 3_600_000;
  const receivedAt = new Date().toISOString();
  // 6,400 positions in 830 KB of commands on one partition, as a writer finds them after an outage: one
  // fetch. Announced with their ids and every field, they weigh about 2 MB, twice what the broker takes
  // for a partition in one produce.
  const lists = Array.from({ length: 8 }, (_, list) =>
    Array.from({ length: 800 }, (_, i) => {
      const gpsTime = new Date(start + (list * 800 + i) * 1000).toISOString();
      return { imei, gpsTime, latitude: -6.2, longitude: 106.8, receivedAt };
    }),
  );
  await produceRaw(
    `${stack.prefix}.trip-locations`,
    lists.map((list) => ({ key: imei, value: JSON.stringify(list) })),
  );

  const group = `${stack.prefix}.trip-writer`;
  const topic = `${stack.prefix}.trip-locations`;
  await eventually(async () => (await groupLag(group, topic)) === 0, 30_000, { what: 'the backlog to be committed', intervalMs: 250 });
  const rows = await db().query<{ id: string }>('SELECT id FROM trip_locations WHERE imei = $1 ORDER BY gps_time', [imei]);
  expect(rows.rows).toHaveLength(6400);
  const announced = (await readTopic(`${stack.prefix}.positions`, Number.MAX_SAFE_INTEGER, 5000)).flatMap((message) =>
    (JSON.parse(message.value!) as Array<{ id: number; imei: string }>).filter((event) => event.imei === imei).map((event) => event.id),
  );
  expect(announced).toEqual(rows.rows.map((row) => Number(row.id)));
});

test('a position a writer committed and then stopped before announcing is announced when its command comes again; a client retry of it is not', async () => {
  const imei = uniqueImei();
  const receivedAt = new Date().toISOString();
  const command = {
    imei,
    gpsTime: new Date(Date.now() - 60_000).toISOString(),
    latitude: -6.2,
    longitude: 106.8,
    speed: 40,
    ignition: true,
    receivedAt,
  };
  // What the stopped writer left: the row committed, nothing announced, the command's offset not committed.
  const [committed] = await storeTripLocations(db(), [command]);
  const retry = { ...command, receivedAt: new Date(Date.parse(receivedAt) + 5000).toISOString() };
  await produceRaw(`${stack.prefix}.trip-locations`, [
    { key: imei, value: JSON.stringify(command) },
    { key: imei, value: JSON.stringify(retry) },
  ]);

  const group = `${stack.prefix}.trip-writer`;
  const topic = `${stack.prefix}.trip-locations`;
  await eventually(async () => (await groupLag(group, topic)) === 0, 30_000, { what: 'both commands to be committed', intervalMs: 250 });
  const announced = (await readTopic(`${stack.prefix}.positions`, Number.MAX_SAFE_INTEGER, 5000)).flatMap((message) =>
    (JSON.parse(message.value!) as Array<{ id: number; imei: string; receivedAt: string }>).filter((event) => event.imei === imei),
  );
  expect(announced).toEqual([expect.objectContaining({ id: committed!.id, imei, receivedAt })]);
  expect(await rowsFor([imei])).toHaveLength(1);
});

test('a writer stopped and restarted mid-stream loses nothing and duplicates nothing', async () => {
  const trips = Array.from({ length: 300 }, () => buildTrip());
  let answered = 0;
  const pending = trips.map(async (trip, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 5));
    const res = await postJson(url, trip, auth);
    answered += 1;
    return res;
  });
  await eventually(() => answered >= 50, 30_000, { what: 'the first 50 answers' });
  const [writer] = stack.tripWriters.splice(0, 1);
  await writer!.stop();
  // The new writer joins only once posts are waiting with no writer to store them.
  await eventually(() => stack.gateway.bus.pendingCount() > 0, 30_000, { what: 'a post waiting while no writer runs' });
  await stack.addTripWriter();

  const responses = await Promise.all(pending);
  expect(responses.map((res) => res.status)).toEqual(Array(300).fill(200));
  const rows = await rowsFor(trips.map((trip) => String(trip.imei)));
  expect(rows).toHaveLength(300);
  const ids = responses.map((res) => String(res.body.data.id)).sort();
  expect(rows.map((row) => String(row.id)).sort()).toEqual(ids);
});

test('two writers in one consumer group share the partitions and store everything once', async () => {
  const first = stack.tripWriters[0]!;
  const second = await startWriter('trip', stack.env);
  const inserted = async (writer: { metricsPort: number }) =>
    (await scrape(`http://127.0.0.1:${writer.metricsPort}/metrics`)).value('fleet_writer_rows_inserted_total');
  try {
    const before = [await inserted(first), await inserted(second)];
    const trips: Array<Record<string, unknown>> = [];
    // Post in rounds until the group has rebalanced and both members have stored something.
    const deadline = Date.now() + boundedWait(45_000).ms;
    while (Date.now() < deadline) {
      const round = Array.from({ length: 40 }, () => buildTrip());
      trips.push(...round);
      const responses = await Promise.all(round.map((trip) => postJson(url, trip, auth)));
      expect(responses.map((res) => res.status)).toEqual(Array(40).fill(200));
      if ((await inserted(first)) > before[0]! && (await inserted(second)) > before[1]!) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const gains = [(await inserted(first)) - before[0]!, (await inserted(second)) - before[1]!];
    expect(gains[0]).toBeGreaterThan(0);
    expect(gains[1]).toBeGreaterThan(0);
    expect(gains[0]! + gains[1]!).toBe(trips.length);
    expect(await rowsFor(trips.map((trip) => String(trip.imei)))).toHaveLength(trips.length);
  } finally {
    await second.stop();
  }
});

test("a writer given its partitions again measures a device's next fix from what was stored meanwhile, not from the fix it remembered", async () => {
  const imei = uniqueImei();
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  const post = async (trip: Record<string, unknown>): Promise<number> => {
    const answer = await postJson(url, trip, auth);
    expect(answer.status).toBe(200);
    return answer.body.data.id as number;
  };
  const filteredOf = async (id: number) => (await db().query('SELECT filtered FROM trip_locations WHERE id = $1', [id])).rows[0]?.filtered;
  // The only writer stores, and remembers, the device's first fix.
  await post(buildTrip({ imei, gpsTime: minutesAgo(130), latitude: -6.2, longitude: 106.8 }));
  // Another writer, while the device's partition is its own, stores a fix two hours later and 111 km north.
  const later = minutesAgo(10);
  await createPartition(db(), dayOf(new Date(later))!);
  await storeTripLocations(db(), [
    { imei, gpsTime: later, latitude: -5.2, longitude: 106.8, speed: 55, ignition: true, receivedAt: later },
  ]);
  // A second writer joins the group and leaves it: the first is given its partitions twice.
  const second = await startWriter('trip', stack.env);
  try {
    const inserted = (await scrape(`http://127.0.0.1:${second.metricsPort}/metrics`)).value('fleet_writer_rows_inserted_total');
    const deadline = Date.now() + boundedWait(45_000).ms;
    // Until the second writer has stored something: it has joined, and the first has rejoined.
    while (Date.now() < deadline) {
      await Promise.all(Array.from({ length: 20 }, () => post(buildTrip())));
      if ((await scrape(`http://127.0.0.1:${second.metricsPort}/metrics`)).value('fleet_writer_rows_inserted_total') > inserted) break;
    }
  } finally {
    await second.stop();
  }
  // A minute after the other writer's fix, back at the first: 111 km in a minute from the newest fix stored.
  const back = await post(buildTrip({ imei, gpsTime: minutesAgo(9), latitude: -6.2, longitude: 106.8 }));
  expect(await filteredOf(back)).toBe('jump');
});

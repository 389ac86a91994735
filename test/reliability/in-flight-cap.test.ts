// Backpressure: a gateway lets at most MAX_IN_FLIGHT commands wait for a writer's reply (a batch counts
// each of its positions). With no writer running, replies stop coming; past the cap every write is
// answered 503 E-S1/1-06 at once, with Retry-After, and publishes nothing, instead of joining a queue
// that would only time out. Once a writer answers, the gateway takes writes again.
import { eventually } from '../support/eventually';
import { buildGroup, buildTrip, closeDb, postJson, signToken, storedTripCount, startWriter, type Stack } from '../support/harness';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, commandsPublished, messagesIn, readTopic } from '../support/kafka';
import { TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const BATCH = TRIP_LOCATION_BATCH_PATH;
const GROUP = VEHICLE_GROUP_PATH;
const MAX_IN_FLIGHT = 2;

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'in-flight-cap',
    tripWriters: 0,
    groupWriters: 0,
    env: { MAX_IN_FLIGHT: String(MAX_IN_FLIGHT), REPLY_TIMEOUT_MS: '30000' },
  });
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function pendingReplies(): Promise<number> {
  const text = await (await fetch(`${stack.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => /^fleet_kafka_pending_replies[ {]/.test(entry));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

function expectFull(response: { status: number; body: any; headers: Headers }): void {
  expect(response.status).toBe(503);
  expect(response.body).toEqual({ code: 'E-S1/1-06', message: expect.any(String), detail: expect.any(String) });
  expect(response.headers.get('retry-after')).toBe('1');
}

test('past MAX_IN_FLIGHT commands waiting, every write route answers 503 E-S1/1-06 at once, while those ahead still wait, and publishes nothing; the gateway takes writes again once replies come', async () => {
  const waiting = [buildTrip(), buildTrip()];
  let waitingAnswered = 0;
  const answers = waiting.map((trip) =>
    postJson(`${stack.url}${TRIP}`, trip, auth).finally(() => {
      waitingAnswered += 1;
    }),
  );
  // A command waits for its reply from the moment it is accepted, before the producer has handed it
  // to the broker: the two count as published once the topic holds them.
  await eventually(async () => (await pendingReplies()) === MAX_IN_FLIGHT, 20_000, { what: 'two commands waiting for a reply' });
  await eventually(async () => (await commandsPublished(stack.prefix)) === MAX_IN_FLIGHT, 20_000, { what: 'two commands published' });

  const refused = [buildTrip(), buildTrip()];
  const timed = async (answer: () => Promise<{ status: number; body: any; headers: Headers }>) => {
    const startedAt = performance.now();
    const response = await answer();
    refusalMs.push(Math.round(performance.now() - startedAt));
    return response;
  };
  const refusalMs: number[] = [];
  expectFull(await timed(() => postJson(`${stack.url}${TRIP}`, refused[0], auth)));
  expectFull(await timed(() => postJson(`${stack.url}${BATCH}`, [refused[1]], auth)));
  expectFull(await timed(() => postJson(`${stack.url}${GROUP}`, buildGroup(), auth)));
  // "At once": the refusals did not queue behind the commands waiting ahead of them, which no writer can
  // answer yet (their reply timeout is 30 s): all three came back while those two still wait.
  expect(waitingAnswered).toBe(0);
  expect(await pendingReplies()).toBe(MAX_IN_FLIGHT);
  process.stdout.write(`in-flight-cap: refusals answered in ${refusalMs.join(', ')} ms, with ${MAX_IN_FLIGHT} commands waiting\n`);

  stack.tripWriters.push(await startWriter('trip', stack.env));
  expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([200, 200]);
  await eventually(async () => (await pendingReplies()) === 0, 20_000, { what: 'nothing waiting' });

  // A batch counts as its positions: one larger than the cap is refused even by an idle gateway.
  const tooLarge = Array.from({ length: MAX_IN_FLIGHT + 1 }, () => buildTrip());
  expectFull(await postJson(`${stack.url}${BATCH}`, tooLarge, auth));
  const fits = Array.from({ length: MAX_IN_FLIGHT }, () => buildTrip());
  const batch = await postJson(`${stack.url}${BATCH}`, fits, auth);
  expect(batch.status).toBe(200);
  expect(batch.body.data).toMatchObject({ accepted: MAX_IN_FLIGHT, rejected: 0 });

  const imeis = (trips: Record<string, unknown>[]) => trips.map((trip) => trip.imei as string);
  expect(await storedTripCount(imeis(waiting))).toBe(waiting.length);
  expect(await storedTripCount(imeis(fits))).toBe(fits.length);
  expect(await storedTripCount([...imeis(refused), ...imeis(tooLarge)])).toBe(0);
  // Counted in commands, not messages: a batch's positions bound for one partition share a message.
  const topics = topicsFor(stack.prefix);
  const published = await readTopic(topics.tripLocations, await messagesIn(topics.tripLocations));
  const commands = published.reduce(
    (sum, message) => sum + (message.value!.startsWith('[') ? (JSON.parse(message.value!) as unknown[]).length : 1),
    0,
  );
  expect(commands).toBe(waiting.length + fits.length);
  expect(await messagesIn(topics.vehicleGroups)).toBe(0);
});

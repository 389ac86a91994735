// Admission by queue age: once a write has waited longer than MAX_QUEUE_AGE_MS for its confirmation and
// none has been confirmed within it for a second, the gateway answers new writes 503 E-S1/1-08 ("busy")
// at once and sends nothing of them, instead of letting them queue until the client gives up. Writes
// already sent still get their outcome, and the gateway takes writes again once confirmations come.
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../support/eventually';
import { buildTrip, closeDb, postJson, signToken, storedTripCount, startWriter, type Stack } from '../support/harness';
import { closeKafka, commandsPublished } from '../support/kafka';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const MAX_QUEUE_AGE_MS = 500;

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'queue-age',
    tripWriters: 0,
    groupWriters: 0,
    env: { MAX_QUEUE_AGE_MS: String(MAX_QUEUE_AGE_MS), REPLY_TIMEOUT_MS: '60000' },
  });
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

test('a write waiting past MAX_QUEUE_AGE_MS sheds new writes with 503 E-S1/1-08, nothing of them sent; the waiting write gets its outcome and the gateway takes writes again', async () => {
  // No writer yet: the first write is sent and waits.
  const first = buildTrip();
  const firstAnswer = postJson(`${stack.url}${TRIP}`, first, auth);
  await eventually(async () => (await commandsPublished(stack.prefix)) === 1, 20_000, { what: 'the first write sent' });
  await sleep(MAX_QUEUE_AGE_MS + 200);

  // Sent together: all but the occasional one let through to probe are shed at once.
  const later = Array.from({ length: 20 }, () => buildTrip());
  const answers = later.map((trip) => ({ trip, answer: postJson(`${stack.url}${TRIP}`, trip, auth) }));
  const settled = new Map<string, Awaited<ReturnType<typeof postJson>>>();
  for (const { trip, answer } of answers) void answer.then((response) => settled.set(trip.imei as string, response));
  await eventually(async () => settled.size >= later.length - 2, 20_000, { what: 'the shed writes answered' });
  // What is unanswered now waits for a writer: sent as a probe.
  await sleep(500);
  const shed = [...settled];
  expect(shed.length).toBeGreaterThanOrEqual(later.length - 2);
  for (const [, response] of shed) {
    expect(response.body).toEqual({
      code: 'E-S1/1-08',
      message: 'The service is busy, retry later',
      detail: `writes wait over ${MAX_QUEUE_AGE_MS} ms for their confirmation (MAX_QUEUE_AGE_MS); nothing of this request was sent`,
    });
    expect(response.headers.get('retry-after')).toBe('1');
  }
  const probes = later.length - shed.length;
  await eventually(async () => (await commandsPublished(stack.prefix)) === 1 + probes, 20_000, { what: 'the probes sent' });

  // A writer comes: what was sent is stored and answered with its id, and new writes are taken again.
  stack.tripWriters.push(await startWriter('trip', stack.env));
  const firstResponse = await firstAnswer;
  expect(firstResponse.status).toBe(200);
  const probeResponses = await Promise.all(answers.map(({ answer }) => answer));
  expect(probeResponses.filter((response) => response.status === 200)).toHaveLength(probes);
  const again = await postJson(`${stack.url}${TRIP}`, buildTrip(), auth);
  expect(again.status).toBe(200);

  expect(await storedTripCount([first.imei as string])).toBe(1);
  expect(await storedTripCount(shed.map(([imei]) => imei))).toBe(0);
}, 120_000);

// The reply topic as a writer fills it: the replies to a batch travel together, one message carrying
// many, and every command published gets exactly one reply naming its row.
import { closeKafka, messagesIn, readTopic } from '../support/kafka';
import { buildTrip, closeDb, db, postJson, signToken, type Stack } from '../support/harness';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'replies' });
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

test('when 80 devices post at once, their replies travel in fewer messages than posts, one reply per post naming its row', async () => {
  const url = `${stack.url}${TRIP_LOCATION_PATH}`;
  const auth = { authorization: `Bearer ${await signToken()}` };
  const trips = Array.from({ length: 80 }, () => buildTrip());

  const responses = await Promise.all(trips.map((trip) => postJson(url, trip, auth)));
  expect(responses.map((res) => res.status)).toEqual(trips.map(() => 200));

  const topic = `${stack.prefix}.replies`;
  const messages = (await readTopic(topic, await messagesIn(topic))).filter((message) => message.headers['reply-probe'] === undefined);
  const replies = messages.flatMap(
    (message) => JSON.parse(message.value!) as Array<{ correlationId: string; reply: { ok: boolean; id: number } }>,
  );

  expect(messages.length).toBeLessThan(trips.length);
  expect(replies).toHaveLength(trips.length);
  expect(new Set(replies.map((entry) => entry.correlationId)).size).toBe(trips.length);
  const stored = await db().query<{ id: string }>('SELECT id FROM trip_locations WHERE imei = ANY($1)', [trips.map((trip) => trip.imei)]);
  expect(replies.map((entry) => entry.reply.id).sort((a, b) => a - b)).toEqual(
    stored.rows.map((row) => Number(row.id)).sort((a, b) => a - b),
  );
  expect(responses.map((res) => res.body.data.id).sort((a: number, b: number) => a - b)).toEqual(
    replies.map((entry) => entry.reply.id).sort((a, b) => a - b),
  );
});

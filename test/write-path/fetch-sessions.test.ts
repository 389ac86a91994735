// kafkajs 2.2.4 sends every fetch in full: each lists every partition the consumer holds on the broker,
// and the broker answers each of them, records or not. A trip-writer holding the 12 trip partitions, at a
// quiet fleet's rate where each fetch brings one record, paid for the other eleven every time, and so
// did the broker. patches/kafkajs+2.2.4.patch (change 9) keeps an incremental fetch session with each
// broker (KIP-227): a fetch lists only the partitions whose offset moved and those given up, and the
// broker answers only partitions with something new. What a consumer receives must not change: every
// record, after a rebalance that takes partitions away and gives them back, and across a pause.
//
// The fetch responses are measured by their size, as kafkajs reports each request's: in full, 30 bytes
// or more a partition; in a session with nothing new, a handful of bytes in all.
// librdkafka's mock cluster (the fallback without Java) keeps no sessions: there, every fetch stays full.
import type { Consumer, EachMessagePayload } from 'kafkajs';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic, produceRaw, testKafka } from '../support/kafka';
import { eventually } from '../support/eventually';

const PARTITIONS = 12;
/** A partition's entry in a fetch response is at least this (partition, error, offsets, records' size). */
const PARTITION_ENTRY = 30;
/** Apache Kafka keeps sessions; the mock cluster, the one broker whose client settings create topics on first use, does not. */
const keepsSessions = testServers().clientEnv.KAFKA_AUTO_CREATE_TOPICS !== 'true';

const consumers: Consumer[] = [];
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((consumer) => consumer.disconnect()));
});
afterAll(() => closeKafka());

interface Member {
  consumer: Consumer;
  /** Values received, by partition. */
  received: Map<number, string[]>;
  /** The size of each fetch response, in order. */
  fetchResponses: number[];
}

async function member(topic: string, groupId: string): Promise<Member> {
  const consumer = testKafka().consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 6000, heartbeatInterval: 1000 });
  consumers.push(consumer);
  const received = new Map<number, string[]>();
  const fetchResponses: number[] = [];
  consumer.on(consumer.events.REQUEST, ({ payload }) => {
    if (payload.apiName === 'Fetch') fetchResponses.push(payload.size);
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  // Offsets committed as each record is taken: a member that gets a partition starts after the last record taken.
  await consumer.run({
    autoCommitThreshold: 1,
    eachMessage: async ({ partition, message }: EachMessagePayload) => {
      received.set(partition, [...(received.get(partition) ?? []), String(message.value)]);
    },
  });
  return { consumer, received, fetchResponses };
}

/** One record to each partition, valued `${round}-${partition}`. */
const round = (topic: string, name: string) =>
  produceRaw(
    topic,
    Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: `${name}-${partition}` })),
  );

const all = (...members: Member[]) => members.flatMap(({ received }) => [...received.values()].flat()).sort();
/** The distinct values of a round that reached any of the members. */
const reached = (name: string, ...members: Member[]) => new Set(all(...members).filter((value) => value.startsWith(`${name}-`))).size;
const expected = (...rounds: string[]) =>
  rounds.flatMap((name) => Array.from({ length: PARTITIONS }, (_, partition) => `${name}-${partition}`)).sort();

test('a consumer of 12 partitions fetches in a session: after the first, a fetch with nothing new is answered without a partition, and every record arrives once', async () => {
  const topic = `${uniquePrefix('fetch-session')}.records`;
  await createTopic(topic, PARTITIONS);
  const one = await member(topic, `${topic}.group`);
  await eventually(() => one.fetchResponses.length >= 5, 15_000, { what: 'five fetches' });

  const [first, ...rest] = one.fetchResponses;
  expect(first).toBeGreaterThan(PARTITIONS * PARTITION_ENTRY);
  if (keepsSessions) expect(Math.max(...rest)).toBeLessThan(PARTITION_ENTRY);
  else expect(Math.min(...rest)).toBeGreaterThan(PARTITIONS * PARTITION_ENTRY);

  const rounds = ['a', 'b', 'c'];
  for (const name of rounds) {
    await round(topic, name);
    await eventually(() => reached(name, one) === PARTITIONS, 15_000, { what: `round ${name}` });
  }
  expect(all(one)).toEqual(expected(...rounds));
}, 60_000);

test('partitions a rebalance takes away and gives back, and a partition paused and resumed, are fetched again from where they were', async () => {
  const topic = `${uniquePrefix('fetch-session-rebalance')}.records`;
  const groupId = `${topic}.group`;
  await createTopic(topic, PARTITIONS);
  const one = await member(topic, groupId);
  await round(topic, 'alone');
  await eventually(() => reached('alone', one) === PARTITIONS, 15_000, { what: 'the first round' });

  // A second member takes half the partitions; the first one's session gives them up. Once both have
  // fetched since, neither has a fetch of the old assignment pending.
  const two = await member(topic, groupId);
  await eventually(() => two.fetchResponses.length > 0, 30_000, { what: 'the second member to fetch' });
  const fetchedBefore = one.fetchResponses.length;
  await eventually(() => one.fetchResponses.length >= fetchedBefore + 2, 15_000, { what: 'the first member to fetch again' });
  await round(topic, 'shared');
  await eventually(() => reached('shared', one, two) === PARTITIONS, 30_000, { what: 'the shared round' });
  expect([...two.received.keys()].length).toBeGreaterThan(0);

  // It leaves: the first member gets them back and fetches them from the group's offsets.
  await two.consumer.disconnect();
  await round(topic, 'back');
  await eventually(() => reached('back', one) === PARTITIONS, 30_000, { what: 'the round after the second member left' });

  // A paused partition is dropped from the session, and fetched from its offset once resumed.
  one.consumer.pause([{ topic, partitions: [0] }]);
  await round(topic, 'paused');
  await eventually(() => reached('paused', one) === PARTITIONS - 1, 15_000, { what: 'the round to the other partitions' });
  expect(all(one)).not.toContain('paused-0');
  one.consumer.resume([{ topic, partitions: [0] }]);
  await eventually(() => all(one).includes('paused-0'), 15_000, { what: 'the paused partition once resumed' });

  // Every record reached one member, once: none of a partition given up came from the first member's session.
  expect(all(one, two)).toEqual(expected('alone', 'shared', 'back', 'paused'));
}, 120_000);

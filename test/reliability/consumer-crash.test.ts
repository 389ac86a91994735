// A Kafka consumer that kafkajs gives up on (a non-retriable crash, after which kafkajs leaves it
// disconnected for good) is replaced by the supervisor that every writer and gateway consumer runs
// under. The crash is real, from the broker: another member already in the group speaks only a partition
// assignment protocol the consumer does not know (as a client of another version or configuration
// sharing the group id would), so joining fails with INCONSISTENT_GROUP_PROTOCOL, which kafkajs does not
// retry. Once that member leaves, a replacement joins and consumes.
// A consumer leaves its group whenever its stop lands: during a replacement's start, during kafkajs's
// own join (tried again or not), or while kafkajs handles a crash it restarts from. kafkajs alone returned
// from a disconnect during a join at once and let the join finish, the consumer running on after the
// stop, and restarted a crashed consumer after its stop (the kafkajs patch, change 10).
import { setTimeout as sleep } from 'node:timers/promises';
import { PartitionAssigners, type Consumer, type PartitionAssigner } from 'kafkajs';
import { createKafka } from '@fleet/shared/kafka/client';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { superviseConsumer, type SupervisedConsumer } from '../../shared/src/kafka/supervised-consumer';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic, produceRaw, testKafka } from '../support/kafka';
import { eventually } from '../support/eventually';

afterAll(async () => {
  await closeKafka();
});

/** Round-robin under a protocol name no project consumer offers. */
const foreignAssigner: PartitionAssigner = (config) => ({ ...PartitionAssigners.roundRobin(config), name: 'ForeignAssigner' });

/** A member of the group that speaks only the foreign protocol, once it has joined (reading a topic of its own). */
async function joinForeignMember(groupId: string, topic: string): Promise<Consumer> {
  const foreign = testKafka().consumer({
    groupId,
    partitionAssigners: [foreignAssigner],
    sessionTimeout: 6000,
    heartbeatInterval: 2000,
    maxWaitTimeInMs: 100,
  });
  try {
    await foreign.connect();
    await foreign.subscribe({ topic });
    let joined = false;
    foreign.on(foreign.events.GROUP_JOIN, () => {
      joined = true;
    });
    await foreign.run({ eachMessage: async () => undefined });
    await eventually(() => joined, 15_000, { what: 'the foreign member to join the group', intervalMs: 100 });
    return foreign;
  } catch (error) {
    await foreign.disconnect();
    throw error;
  }
}

/**
 * A client as the services make it, logging to `logger` (silent unless given), and a new commands topic
 * under a prefix of `name`'s.
 */
async function clientAndTopic(name: string, logger: Logger = createLogger('consumer-crash', 'silent')) {
  const kafka = createKafka({ brokers: testServers().kafkaBrokers.split(','), clientId: 'fleet-tests-crash', logger });
  const prefix = uniquePrefix(name);
  const topic = `${prefix}.commands`;
  await createTopic(topic);
  return { logger, kafka, prefix, topic };
}

test('a consumer that crashes for good while joining is replaced, and the replacement consumes the topic', async () => {
  const lines: Array<{ msg: string; err?: string }> = [];
  const { logger, kafka, prefix, topic } = await clientAndTopic(
    'consumer-crash',
    createLogger('consumer-crash', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
  );
  const groupId = `${topic}.group`;
  await createTopic(`${prefix}.foreign`);
  await produceRaw(topic, [{ value: 'one' }, { value: 'two' }, { value: 'three' }]);

  const foreign = await joinForeignMember(groupId, `${prefix}.foreign`);

  const received: string[] = [];
  let created = 0;
  const supervised = await superviseConsumer({
    name: groupId,
    logger,
    create: () => {
      created += 1;
      return kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 2000, maxWaitTimeInMs: 5 });
    },
    run: async (consumer) => {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void received.push(String(message.value)) });
    },
  });
  try {
    const crashed = () =>
      lines.find((line) => line.msg === 'the Kafka consumer crashed and kafkajs will not restart it; starting a new one');
    await eventually(() => crashed() !== undefined, 15_000, { what: 'the consumer to crash', intervalMs: 100 });
    expect(crashed()!.err).toMatch(/incompatible with those of existing members/);
    expect(received).toEqual([]);

    await foreign.disconnect();
    await eventually(() => received.length >= 3, 45_000, { what: 'the replacement to consume the topic', intervalMs: 100 });

    expect(created).toBeGreaterThanOrEqual(2);
    expect(received.sort()).toEqual(['one', 'three', 'two']);
    expect(lines.map((line) => line.msg)).toContain('the Kafka consumer runs again');
  } finally {
    await supervised.stop();
    await foreign.disconnect();
  }
}, 60_000);

/** Moments into a replacement's start at which the stop lands: the machine's speed decides which step each one hits. */
const MOMENTS_MS = [0, 5, 20, 50, 100, 200];

test('a consumer stopped while its replacement is starting leaves no member in its group', async () => {
  const { logger, kafka, prefix, topic } = await clientAndTopic('consumer-crash-stop');
  await createTopic(`${prefix}.foreign`);
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const left: Array<{ afterMs: number; members: number }> = [];
    for (const afterMs of MOMENTS_MS) {
      const groupId = `${topic}.group.${afterMs}`;
      const foreign = await joinForeignMember(groupId, `${prefix}.foreign`);
      let supervised: SupervisedConsumer | undefined;
      try {
        // The first consumers crash for good on the foreign member; the first one started after it has left
        // can join, and is stopped while it starts.
        let foreignGone = false;
        let joinable: () => void = () => undefined;
        const starting = new Promise<void>((resolve) => (joinable = resolve));
        supervised = await superviseConsumer({
          name: groupId,
          logger,
          create: () => {
            if (foreignGone) joinable();
            return kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 2000, maxWaitTimeInMs: 100 });
          },
          run: async (consumer) => {
            await consumer.connect();
            await consumer.subscribe({ topic, fromBeginning: true });
            await consumer.run({ eachMessage: async () => undefined });
          },
        });
        await foreign.disconnect();
        foreignGone = true;
        await starting;
        await sleep(afterMs);
        await supervised.stop();
        // Long enough for a replacement left to itself to finish joining.
        await sleep(3000);
        const [group] = (await admin.describeGroups([groupId])).groups;
        left.push({ afterMs, members: group?.members.length ?? 0 });
      } finally {
        await supervised?.stop();
        await foreign.disconnect();
      }
    }
    expect(left).toEqual(MOMENTS_MS.map((afterMs) => ({ afterMs, members: 0 })));
  } finally {
    await admin.disconnect();
  }
}, 120_000);

/** Moments into a kafkajs consumer's own work (its join, a crash's handling) at which its stop lands. */
const STOP_MOMENTS_MS = [0, 2, 10, 30, 60, 100, 150, 250, 400];

/** How many members the group has, once a member left to itself would have finished joining. */
async function membersLeft(groupId: string): Promise<number> {
  await sleep(3000);
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const [group] = (await admin.describeGroups([groupId])).groups;
    return group?.members.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

test('a kafkajs consumer disconnected during its group join leaves the group', async () => {
  const { kafka, topic } = await clientAndTopic('consumer-join-stop');
  const left: Array<{ afterMs: number; members: number }> = [];
  for (const afterMs of STOP_MOMENTS_MS) {
    const groupId = `${topic}.group.${afterMs}`;
    const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 2000, maxWaitTimeInMs: 100 });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const running = consumer.run({ eachMessage: async () => undefined });
      await sleep(afterMs);
      await consumer.disconnect();
      await running;
      left.push({ afterMs, members: await membersLeft(groupId) });
    } finally {
      await consumer.disconnect();
    }
  }
  expect(left).toEqual(STOP_MOMENTS_MS.map((afterMs) => ({ afterMs, members: 0 })));
}, 90_000);

test('a consumer stopped while kafkajs handles a crash it restarts from, or rejoins after it, leaves no member in its group', async () => {
  const { logger, kafka, topic } = await clientAndTopic('consumer-restart-stop');
  await produceRaw(topic, [{ value: 'one' }]);
  const left: Array<{ afterMs: number; members: number }> = [];
  let restartedBeforeStop = 0;
  for (const afterMs of STOP_MOMENTS_MS) {
    const groupId = `${topic}.group.${afterMs}`;
    let failed: () => void = () => undefined;
    const failing = new Promise<void>((resolve) => (failed = resolve));
    let restarts = 0;
    const supervised = await superviseConsumer({
      name: groupId,
      logger,
      create: () => {
        // A batch that fails with no retries left crashes the consumer with a retriable error, which kafkajs
        // restarts from by itself, 50 ms later: a new join.
        const consumer = kafka.consumer({
          groupId,
          sessionTimeout: 6000,
          heartbeatInterval: 2000,
          maxWaitTimeInMs: 100,
          retry: { retries: 0, initialRetryTime: 50 },
        });
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          if (payload.restart) restarts += 1;
        });
        return consumer;
      },
      run: async (consumer) => {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          eachMessage: async () => {
            failed();
            throw new Error('the batch fails');
          },
        });
      },
    });
    try {
      await failing;
      await sleep(afterMs);
      if (restarts > 0) restartedBeforeStop += 1;
      await supervised.stop();
      left.push({ afterMs, members: await membersLeft(groupId) });
    } finally {
      await supervised.stop();
    }
  }
  expect(left).toEqual(STOP_MOMENTS_MS.map((afterMs) => ({ afterMs, members: 0 })));
  // The later stops came after kafkajs had decided to restart (the earlier ones, while it handled the crash).
  expect(restartedBeforeStop).toBeGreaterThan(0);
}, 90_000);

test('a consumer stopped while its group join is being retried stops at the next attempt, not after every retry', async () => {
  const { kafka, topic } = await clientAndTopic('consumer-join-retry-stop');
  // The group's leader finds the group rebalancing again at every assignment until released, as when members
  // keep joining: kafkajs tries the whole join again after a pause, 2 s and growing, twenty times.
  let released = false;
  let assignments = 0;
  const rebalancingAssigner: PartitionAssigner = (config) => {
    const roundRobin = PartitionAssigners.roundRobin(config);
    return {
      ...roundRobin,
      name: 'RebalancingAssigner',
      async assign(group) {
        assignments += 1;
        if (!released) throw Object.assign(new Error('the group is rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
        return roundRobin.assign(group);
      },
    };
  };
  const groupId = `${topic}.group`;
  const consumer = kafka.consumer({
    groupId,
    partitionAssigners: [rebalancingAssigner],
    sessionTimeout: 6000,
    heartbeatInterval: 2000,
    maxWaitTimeInMs: 100,
    retry: { retries: 20, initialRetryTime: 2000, maxRetryTime: 5000 },
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const running = consumer.run({ eachMessage: async () => undefined });
    await eventually(() => assignments >= 2, 15_000, { what: 'the join to be tried again', intervalMs: 20 });
    // The stop ends at the join's next attempt, one pause away (at most 6 s, jitter included); had it waited
    // for the join, it would still be waiting when the join is released.
    const stopping = consumer.disconnect();
    const giveUp = new AbortController();
    const stoppedFirst = await Promise.race([
      stopping.then(() => true),
      sleep(15_000, undefined, { signal: giveUp.signal }).then(
        () => false,
        () => false,
      ),
    ]);
    giveUp.abort();
    const atStop = assignments;
    released = true;
    await stopping;
    await running;
    expect(stoppedFirst).toBe(true);
    expect(await membersLeft(groupId)).toBe(0);
    expect(assignments).toBe(atStop);
  } finally {
    released = true;
    await consumer.disconnect();
  }
}, 60_000);

// Direct access to the run's Kafka for assertions: what a topic holds, and producing raw messages.
import type { Admin, Kafka } from 'kafkajs';
import { createKafka, producerConfig } from '@fleet/shared/kafka/client';
import { readConsumerLag } from '@fleet/shared/kafka/consumer-lag';
import { clusterReplicationFactor, ensureTopics, topicsFor, waitForLeaders } from '@fleet/shared/kafka/topics';
import { createLogger } from '@fleet/shared/logger';
import { boundedWait } from './deadline';
import { testServers } from './harness';

let kafka: Kafka | undefined;
let admin: Admin | undefined;

export function testKafka(): Kafka {
  kafka ??= createKafka({
    brokers: testServers().kafkaBrokers.split(','),
    clientId: 'fleet-tests',
    logger: createLogger('tests', 'silent'),
  });
  return kafka;
}

async function connectedAdmin(): Promise<Admin> {
  if (!admin) {
    admin = testKafka().admin();
    await admin.connect();
  }
  return admin;
}

/** How many messages were ever written to a topic (the sum of its partitions' end offsets). */
export async function messagesIn(topic: string): Promise<number> {
  const client = await connectedAdmin();
  await client.fetchTopicMetadata({ topics: [topic] });
  const offsets = await client.fetchTopicOffsets(topic);
  return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
}

/** Creates a prefix's topics on the run's broker, or on others (a test's own); a no-op on one that creates them on first use. */
export async function provisionTopics(prefix: string, brokers?: string[]): Promise<void> {
  if (autoCreates()) return;
  if (!brokers) {
    await ensureTopics(await connectedAdmin(), { prefix, replicationFactor: 1 });
    return;
  }
  const other = createKafka({ brokers, clientId: 'fleet-tests', logger: createLogger('tests', 'silent') }).admin();
  await other.connect();
  try {
    await ensureTopics(other, { prefix, replicationFactor: await clusterReplicationFactor(other) });
  } finally {
    await other.disconnect();
  }
}

/** Creates one topic outside the project's table, for tests of the Kafka mechanisms alone. */
export async function createTopic(topic: string, partitions = 1): Promise<void> {
  if (autoCreates()) return;
  const admin = await connectedAdmin();
  await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] });
  await waitForLeaders(admin, [topic]);
}

function autoCreates(): boolean {
  return testServers().clientEnv.KAFKA_AUTO_CREATE_TOPICS === 'true';
}

export async function produceRaw(
  topic: string,
  messages: Array<{ key?: string; value: string | null; headers?: Record<string, string>; partition?: number }>,
): Promise<void> {
  const producer = testKafka().producer(producerConfig(autoCreates()));
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

/** Reads a topic from the beginning until `count` messages have arrived or the time is up. */
export async function readTopic(topic: string, count: number, timeoutMs = 15_000) {
  const consumer = testKafka().consumer({ groupId: `fleet-tests-reader-${Math.random().toString(16).slice(2)}`, maxWaitTimeInMs: 100 });
  const received: Array<{ partition: number; key: string | undefined; value: string | undefined; headers: Record<string, string> }> = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, boundedWait(timeoutMs).ms);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = String(value);
          received.push({ partition, key: message.key?.toString(), value: message.value?.toString(), headers });
          if (received.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return received;
}

export async function closeKafka(): Promise<void> {
  await admin?.disconnect();
  admin = undefined;
}

/** The group's lag on a topic, all partitions together, as the services' `fleet_consumer_group_lag` reads it. */
export async function groupLag(groupId: string, topic: string): Promise<number> {
  const partitions = await readConsumerLag({ admin: await connectedAdmin(), groupId, topic });
  return partitions.reduce((sum, { lag }) => sum + lag, 0);
}

/** The offsets a consumer group has committed on a topic, by partition (partitions it never committed are absent). */
export async function committedOffsets(groupId: string, topic: string): Promise<Map<number, number>> {
  const client = await connectedAdmin();
  const [committed] = await client.fetchOffsets({ groupId, topics: [topic] });
  return new Map((committed?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]));
}

/** Commands ever published for the writers under a topic prefix (trip locations and vehicle groups). */
export async function commandsPublished(prefix: string): Promise<number> {
  const topics = topicsFor(prefix);
  return (await messagesIn(topics.tripLocations)) + (await messagesIn(topics.vehicleGroups));
}

// The Kafka part of a trip create, written once for each client the project could run on: a command
// produced with acks=all by an idempotent producer (the gateway), read by a consumer group whose member
// answers it with a reply produced to one partition of the reply topic (the writer), and that reply read
// by a second group (the gateway's reply listener). The settings are the stack's: fetches held up to
// KAFKA_FETCH_MAX_WAIT_MS (500 ms) for one byte, offsets not committed per batch. `npm run
// bench:clients` measures what each client costs doing it (docs/adr/0013-kafka-client.md).
import {
  Consumer,
  Producer,
  stringDeserializers,
  stringSerializers,
  type MessagesStream,
  type MessageToProduce,
} from '@platformatic/kafka';
import type { Consumer as KafkajsConsumer } from 'kafkajs';
import { consumerConfig, createKafka, producerConfig } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import type { PipelineClientName } from './client-pipeline';

export interface PipelineTopics {
  commands: string;
  replies: string;
}

/** One client running both ends of the pipeline in this process. */
export interface PipelineClient {
  /** Joins both groups; resolves once replies can be read. */
  start(onReply: (correlationId: string) => void): Promise<void>;
  /** Produces a command; resolves once the broker acknowledged it. */
  send(key: string, correlationId: string): Promise<void>;
  stop(): Promise<void>;
}

/** The stack's fetch settings (the services' KAFKA_FETCH_MAX_WAIT_MS and KAFKA_FETCH_MIN_BYTES defaults). */
const FETCH_MAX_WAIT_MS = 500;
const FETCH_MIN_BYTES = 1;
/** The reply partition every reply goes to, as a lone gateway's lowest. */
const REPLY_PARTITION = 0;
const COMMAND = JSON.stringify({ latitude: 52.52, longitude: 13.405, speed: 42, heading: 90, gpsTime: '2026-11-28T10:00:00Z' });

function kafkajsClient(brokers: string[], topics: PipelineTopics, group: string): PipelineClient {
  const kafka = createKafka({ brokers, clientId: 'bench-pipeline', logger: createLogger('bench-pipeline', 'warn') });
  const settings = { allowAutoTopicCreation: false, fetchMaxWaitMs: FETCH_MAX_WAIT_MS, fetchMinBytes: FETCH_MIN_BYTES };
  const gateway = kafka.producer(producerConfig(false));
  const writer = kafka.producer(producerConfig(false));
  const writerGroup = kafka.consumer(consumerConfig(`${group}.writer`, settings));
  const replyGroup = kafka.consumer(consumerConfig(`${group}.replies`, settings));
  const consumers: KafkajsConsumer[] = [writerGroup, replyGroup];
  return {
    async start(onReply) {
      await Promise.all([gateway.connect(), writer.connect(), writerGroup.connect(), replyGroup.connect()]);
      const bothJoined = Promise.all(consumers.map((consumer) => joined(consumer)));
      await writerGroup.subscribe({ topic: topics.commands, fromBeginning: false });
      await replyGroup.subscribe({ topic: topics.replies, fromBeginning: false });
      await writerGroup.run({
        autoCommit: false,
        partitionsConsumedConcurrently: 12,
        eachBatch: async ({ batch }) => {
          const messages = batch.messages.map((message) => ({
            partition: REPLY_PARTITION,
            value: message.headers?.correlation?.toString() ?? '',
          }));
          await writer.send({ topic: topics.replies, acks: -1, messages });
        },
      });
      await replyGroup.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) onReply(message.value?.toString() ?? '');
        },
      });
      await bothJoined;
    },
    async send(key, correlationId) {
      await gateway.send({
        topic: topics.commands,
        acks: -1,
        messages: [{ key, value: COMMAND, headers: { correlation: correlationId } }],
      });
    },
    async stop() {
      await Promise.all([...consumers.map((consumer) => consumer.disconnect()), gateway.disconnect(), writer.disconnect()]);
    },
  };
}

/** Resolves once the consumer has joined its group and been given its partitions. */
function joined(consumer: KafkajsConsumer): Promise<void> {
  return new Promise((resolve) => {
    const remove = consumer.on(consumer.events.GROUP_JOIN, () => {
      remove();
      resolve();
    });
  });
}

/**
 * Sends one produce at a time, the messages handed over meanwhile together in the next: an idempotent
 * @platformatic/kafka producer given a second produce to a partition before the first was answered had
 * the broker refuse it as out of order, for good (kafkajs holds its own back to one a broker).
 */
function oneProduceAtATime(send: (messages: MessageToProduce<string, string, string, string>[]) => Promise<unknown>) {
  let queue: Array<{ message: MessageToProduce<string, string, string, string>; done: (error?: unknown) => void }> = [];
  let sending = false;
  async function flush(): Promise<void> {
    sending = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      const error = await send(batch.map(({ message }) => message)).then(
        () => undefined,
        (failure: unknown) => failure ?? new Error('produce failed'),
      );
      for (const { done } of batch) done(error);
    }
    sending = false;
  }
  return (message: MessageToProduce<string, string, string, string>) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ message, done: (error) => (error === undefined ? resolve() : reject(error as Error)) });
      if (!sending) void flush();
    });
}

function platformaticClient(brokers: string[], topics: PipelineTopics, group: string): PipelineClient {
  const base = { clientId: 'bench-pipeline', bootstrapBrokers: brokers };
  const producer = (name: string) =>
    new Producer({ ...base, clientId: `bench-pipeline-${name}`, idempotent: true, acks: -1, serializers: stringSerializers });
  const gateway = producer('gateway');
  const writer = producer('writer');
  const consumer = (name: string) =>
    new Consumer({
      ...base,
      clientId: `bench-pipeline-${name}`,
      groupId: `${group}.${name}`,
      deserializers: stringDeserializers,
      maxWaitTime: FETCH_MAX_WAIT_MS,
      minBytes: FETCH_MIN_BYTES,
      autocommit: false,
    });
  const writerGroup = consumer('writer');
  const replyGroup = consumer('replies');
  const command = oneProduceAtATime((messages) => gateway.send({ messages }));
  const reply = oneProduceAtATime((messages) => writer.send({ messages }));
  const streams: MessagesStream<string, string, string, string>[] = [];
  return {
    async start(onReply) {
      const commands = await writerGroup.consume({ topics: [topics.commands], mode: 'latest' });
      const replies = await replyGroup.consume({ topics: [topics.replies], mode: 'latest' });
      streams.push(commands, replies);
      commands.on('data', (message) => {
        void reply({ topic: topics.replies, partition: REPLY_PARTITION, value: message.headers.get('correlation') ?? '' });
      });
      replies.on('data', (message) => onReply(message.value));
    },
    async send(key, correlationId) {
      await command({ topic: topics.commands, key, value: COMMAND, headers: { correlation: correlationId } });
    },
    async stop() {
      await Promise.all(streams.map((stream) => stream.close()));
      await Promise.all([writerGroup.close(), replyGroup.close(), gateway.close(), writer.close()]);
    },
  };
}

export function pipelineClient(name: PipelineClientName, brokers: string[], topics: PipelineTopics, group: string): PipelineClient {
  return name === 'kafkajs' ? kafkajsClient(brokers, topics, group) : platformaticClient(brokers, topics, group);
}

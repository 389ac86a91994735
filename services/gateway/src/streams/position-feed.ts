// The committed positions a gateway's live streams need, read from <prefix>.positions, where the
// trip-writers announce each position once it is committed. Every gateway reads the whole topic in a
// consumer group of its own (each stream may follow any device, whichever writer stored it), starting
// when its first stream opens, at the topic's end: a stream that reconnects catches up from PostgreSQL.
// Each event is delivered with its partition, in which row ids arrive in the order they were committed
// (stream-cursor.ts), and the feed says which partition a device's positions reach.
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '@fleet/shared/logger';
import { consumerConfig, type KafkaClientSettings } from '@fleet/shared/kafka/client';
import { TopicLayout } from '@fleet/shared/kafka/topic-layout';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';

export type Deliver = (event: PositionEvent, partition: number) => void;

export interface PositionFeedOptions {
  kafka: Kafka;
  topic: string;
  groupId: string;
  settings: KafkaClientSettings;
  logger: Logger;
}

/** How long the first stream waits for the feed's consumer to be reading. */
const READY_TIMEOUT_MS = 30_000;

export class PositionFeed {
  private consumer: Consumer | undefined;
  private starting: Promise<void> | undefined;
  private readonly subscribers = new Map<string, Set<Deliver>>();
  private readonly layout = new TopicLayout();

  constructor(private readonly options: PositionFeedOptions) {}

  /** Resolves once the feed reads the topic; the first call starts it. */
  ready(): Promise<void> {
    this.starting ??= this.start().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /** The partition of the positions topic a device's positions reach; known once ready() has resolved. */
  partitionOf(imei: string): number {
    const partition = this.layout.partitionOf(this.options.topic, imei);
    if (partition === undefined) throw new Error('the position feed is not ready');
    return partition;
  }

  /** Delivers every committed position of these devices until the returned function is called. */
  subscribe(imeis: readonly string[], deliver: Deliver): () => void {
    for (const imei of imeis) {
      const set = this.subscribers.get(imei) ?? new Set<Deliver>();
      set.add(deliver);
      this.subscribers.set(imei, set);
    }
    return () => {
      for (const imei of imeis) {
        const set = this.subscribers.get(imei);
        set?.delete(deliver);
        if (set?.size === 0) this.subscribers.delete(imei);
      }
    };
  }

  private async start(): Promise<void> {
    const { kafka, topic, groupId, settings, logger } = this.options;
    const admin = kafka.admin();
    await admin.connect();
    try {
      this.layout.update((await admin.fetchTopicMetadata({ topics: [topic] })).topics);
    } finally {
      await admin.disconnect();
    }
    const consumer = kafka.consumer(consumerConfig(groupId, settings));
    this.consumer = consumer;
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: false });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (!message.value) return;
        let events: PositionEvent[];
        try {
          events = JSON.parse(message.value.toString()) as PositionEvent[];
        } catch {
          logger.warn({ topic, offset: message.offset }, 'a position event that is not JSON was skipped');
          return;
        }
        for (const event of events) for (const deliver of this.subscribers.get(event.imei) ?? []) deliver(event, partition);
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      joined,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the position feed did not join its group within ${READY_TIMEOUT_MS / 1000} s`)),
          READY_TIMEOUT_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    logger.info({ topic, groupId }, 'reading committed positions for live streams');
  }

  async stop(): Promise<void> {
    this.subscribers.clear();
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

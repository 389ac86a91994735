// The committed positions a gateway's live streams need, read from <prefix>.positions, where the
// trip-writers announce each position once it is committed. Every gateway reads the whole topic in a
// consumer group of its own (each stream may follow any device, whichever writer stored it), starting
// when its first stream opens, at the topic's end: a stream that reconnects catches up from PostgreSQL.
// Each event is delivered with its partition, in which row ids arrive in the order they were committed
// (stream-cursor.ts), and the feed says which partition a device's positions reach.
import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '@fleet/shared/logger';
import { AdminClient } from '@fleet/shared/kafka/admin-client';
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
  private readonly admin: AdminClient;
  private stopped = false;
  /** Gives up a start waiting for the group to be joined. */
  private abandonStart: ((error: Error) => void) | undefined;

  constructor(private readonly options: PositionFeedOptions) {
    this.admin = new AdminClient(options.kafka.admin());
  }

  /** Resolves once the feed reads the topic; the first call starts it. */
  ready(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the position feed is stopped'));
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
    const described = await this.admin.ask(async (admin) => {
      await admin.connect();
      try {
        return await admin.fetchTopicMetadata({ topics: [topic] });
      } finally {
        await admin.disconnect();
      }
    });
    this.layout.update(described.topics);
    this.refuseIfStopped();
    const consumer = kafka.consumer(consumerConfig(groupId, settings));
    this.consumer = consumer;
    try {
      const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
      await consumer.connect();
      this.refuseIfStopped();
      await consumer.subscribe({ topic, fromBeginning: false });
      this.refuseIfStopped();
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
      this.refuseIfStopped();
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        this.abandonStart = reject;
        timer = setTimeout(
          () => reject(new Error(`the position feed did not join its group within ${READY_TIMEOUT_MS / 1000} s`)),
          READY_TIMEOUT_MS,
        );
        void joined.then(resolve);
      }).finally(() => {
        clearTimeout(timer);
        this.abandonStart = undefined;
      });
    } catch (error) {
      // A consumer that did not start (stopped meanwhile, or never joined) is closed, not left to join later.
      if (this.consumer === consumer) this.consumer = undefined;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    logger.info({ topic, groupId }, 'reading committed positions for live streams');
  }

  private refuseIfStopped(): void {
    if (this.stopped) throw new Error('the position feed is stopped');
  }

  /**
   * Closes the feed's clients. A start still under way gives up at its next step and closes its consumer
   * itself, so that no step of the start (a run() after the disconnect) joins the group after the stop.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.subscribers.clear();
    this.abandonStart?.(new Error('the position feed is stopped'));
    await Promise.allSettled([this.admin.close(), this.starting]);
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

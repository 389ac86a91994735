// The gateway's reply path: the partitions of the reply topic the reply group assigns this gateway,
// each probed before it is used, and the listener that reads them into the table of pending requests.
import { randomBytes } from 'node:crypto';
import { timeout, TimeoutStrategy } from 'cockatiel';
import type { Kafka, Producer } from 'kafkajs';
import { AppError } from '@fleet/shared/errors';
import type { KafkaClientSettings } from '@fleet/shared/kafka/client';
import type { Logger } from '@fleet/shared/logger';
import type { PendingReplies } from './pending-replies';
import { ReplyListener } from './reply-listener';
import { ReplyPartitions } from './reply-partitions';
import { ReplyPathProbe } from './reply-path-probe';

/** How long start() waits for the reply group to assign this gateway its partitions and for their probes. */
const REPLY_PATH_TIMEOUT_MS = 60_000;

export interface ReplyPathOptions {
  kafka: Kafka;
  settings: KafkaClientSettings;
  /** The reply topic. */
  topic: string;
  pending: PendingReplies;
  /** The producer the probes are sent with. */
  producer: () => Producer;
  isStopping: () => boolean;
  /** Counts each reply entry the listener reads: this gateway's own, or another's. */
  onRead?: (owner: 'self' | 'other') => void;
  logger: Logger;
}

export class ReplyPath {
  /** Marks this gateway's correlation ids, so that the listener tells its own replies from others'. */
  readonly tag = randomBytes(4).toString('hex');
  private readonly partitions = new ReplyPartitions();
  private readonly probe: ReplyPathProbe;
  private readonly listener: ReplyListener;
  private assignedOnce: (confirming: Promise<void>) => void = () => undefined;
  private readonly firstAssignment = new Promise<Promise<void>>((resolve) => (this.assignedOnce = resolve));

  constructor(private readonly options: ReplyPathOptions) {
    this.probe = new ReplyPathProbe({ producer: options.producer, topic: options.topic });
    this.listener = new ReplyListener({
      kafka: options.kafka,
      settings: options.settings,
      topic: options.topic,
      // One group for every gateway on these topics: each is assigned its share of the reply partitions.
      groupId: `${options.topic}.gateways`,
      pending: options.pending,
      partitions: this.partitions,
      ownerTag: this.tag,
      onAssigned: (partitions) => this.assigned(partitions),
      onProbe: (probeId) => this.probe.arrived(probeId),
      onRead: options.onRead,
      logger: options.logger,
    });
  }

  /** Starts reading; resolves once the first assignment's partitions are confirmed. */
  async start(): Promise<void> {
    await this.listener.start();
    const giveUp = timeout(REPLY_PATH_TIMEOUT_MS, TimeoutStrategy.Aggressive);
    await giveUp
      .execute(async () => await await this.firstAssignment)
      .catch((error: Error) => {
        throw new Error(`the reply consumer did not start reading within ${REPLY_PATH_TIMEOUT_MS / 1000} s: ${error.message}`, {
          cause: error,
        });
      });
  }

  /**
   * A new assignment of reply partitions: requests named on a partition that moved away are answered a
   * retry-safe 503 now (their replies reach another gateway), and new partitions are probed before use.
   */
  private assigned(partitions: number[]): void {
    const lost = this.partitions.assign(partitions);
    const { logger, topic, pending, isStopping } = this.options;
    if (lost.length > 0) {
      const failed = pending.failOnPartitions(
        new Set(lost),
        new AppError({
          kind: 'replyTimeout',
          detail: 'the reply partition of this request moved to another gateway; retrying is safe',
          retryAfterSeconds: 1,
        }),
      );
      logger.info({ lost, requestsAnswered503: failed }, 'reply partitions moved to another gateway');
    }
    if (partitions.length === 0) {
      logger.warn(
        { topic },
        'this gateway owns no partition of the reply topic (more gateways than its partitions); it answers writes 503 until it is given one',
      );
    }
    const confirming = this.probe.confirm(this.partitions.unconfirmed(), {
      confirmed: (partition) => this.partitions.confirm(partition),
      wanted: (partition) => !isStopping() && this.partitions.ownedList().includes(partition),
    });
    this.assignedOnce(confirming);
  }

  /** True while the listener reads and a confirmed partition is owned. */
  isUp(): boolean {
    return this.listener.isUp() && this.partitions.hasUsable();
  }

  /** True when the group left this gateway no partition at all. */
  ownsNone(): boolean {
    return this.partitions.ownedList().length === 0;
  }

  /** A confirmed partition to name in a command, preferring those `healthy` accepts. */
  pick(healthy: (partition: number) => boolean): number | undefined {
    return this.partitions.pick(healthy);
  }

  stop(): Promise<void> {
    this.probe.stop();
    return this.listener.stop();
  }
}

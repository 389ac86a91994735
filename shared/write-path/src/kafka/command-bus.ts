// The gateway's side of the command protocol: publish a command naming one of this gateway's reply
// partitions, wait for the writer's reply there. Composes a batching publisher, the table of requests
// waiting for replies, the reply path (the partitions this gateway owns and their listener), the
// broker's health and the admission by queue age; each is one module of this folder.
import { randomUUID } from 'node:crypto';
import { timeout, TimeoutStrategy } from 'cockatiel';
import { AppError } from '@fleet/shared/errors';
import { AdminClient } from '@fleet/shared/kafka/admin-client';
import { KAFKA_REQUEST_TIMEOUT_MS, producerConfig } from '@fleet/shared/kafka/client';
import { RenewingProducer } from '@fleet/shared/kafka/renewing-producer';
import { PRODUCE_BYTES } from '@fleet/shared/kafka/produce-size';
import { TopicLayout } from '@fleet/shared/kafka/topic-layout';
import { headers } from '@fleet/shared/kafka/topics';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import { BatchingPublisher, LeaderStillBusy, PublishTimedOut } from './batching-publisher';
import { encode, encodeList, MAX_COMMAND_BYTES, publishFailure, refusedForSize, tooLarge, type Encoded } from './command-encoding';
import { BrokerHealth } from './broker-health';
import { FailingLeaders } from './failing-leaders';
import { listOf, single, type CommandBusOptions, type CommandListRequest, type CommandRequest } from './command-request';
import { PendingReplies, type PendingAnswer } from './pending-replies';
import { QueueAgeAdmission } from './queue-age-admission';
import { ReplyPath } from './reply-path';

/** How often the broker is checked while it is up. */
const HEALTH_INTERVAL_MS = 5000;
/** The most commands sent in one produce request. */
const MAX_BATCH_SIZE = 2000;
export class CommandBus {
  private readonly producer: RenewingProducer;
  private readonly admin: AdminClient;
  private readonly pending: PendingReplies;
  private readonly publisher: BatchingPublisher;
  private readonly health: BrokerHealth;
  private readonly replies: ReplyPath;
  private readonly admission: QueueAgeAdmission;
  private readonly layout = new TopicLayout();
  /** Brokers whose last produce failed while on a cluster: replies are not sent their way. */
  private readonly failingLeaders: FailingLeaders;
  /** performance.now() of the last produce the broker confirmed. */
  private lastPublishedAt = Number.NEGATIVE_INFINITY;
  /** Starts every correlation id this gateway hands out, so a reply read is known for its own or another's. */
  private started = false;
  private stopping = false;

  constructor(private readonly options: CommandBusOptions) {
    const { kafka, topics, logger } = options;
    this.producer = new RenewingProducer({
      kafka,
      // The bus answers each request within its publish timeout whatever kafkajs does; kafkajs goes on
      // retrying the produce behind it (producerConfig's retries).
      config: producerConfig(options.settings.allowAutoTopicCreation),
      logger,
    });
    this.admin = new AdminClient(kafka.admin());
    this.failingLeaders = new FailingLeaders(() => this.describeTopics(), logger);
    const deadline = timeout(options.publishTimeoutMs, TimeoutStrategy.Aggressive);
    // On a cluster the check may first ask a frozen node, which holds it for a whole request timeout
    // before the client asks another; and while produces to the other nodes succeed, one silent node of
    // several is not Kafka down, whatever the check meets.
    const clusterWindowMs = KAFKA_REQUEST_TIMEOUT_MS + options.publishTimeoutMs;
    const clusterDeadline = timeout(clusterWindowMs, TimeoutStrategy.Aggressive);
    const check = async () => {
      if (this.layout.leaders() <= 1) return await deadline.execute(() => this.describeTopics());
      try {
        await clusterDeadline.execute(() => this.describeTopics());
      } catch (error) {
        if (performance.now() - this.lastPublishedAt > clusterWindowMs) throw error;
      }
    };
    this.admission = new QueueAgeAdmission(options.maxQueueAgeMs);
    this.pending = new PendingReplies({
      replyTimeoutMs: options.replyTimeoutMs,
      onSettled: (seconds, outcome) => {
        if (outcome === 'replied') this.admission.replied(seconds * 1000);
        options.onReply?.(seconds, outcome);
      },
    });
    this.health = new BrokerHealth({
      check,
      intervalMs: HEALTH_INTERVAL_MS,
      logger,
    });
    this.publisher = new BatchingPublisher({
      send: async (topicMessages) => {
        await this.producer.sendBatch(topicMessages);
      },
      sendTimeoutMs: options.publishTimeoutMs,
      maxBatchSize: MAX_BATCH_SIZE,
      maxBatchBytes: PRODUCE_BYTES,
      lingerMs: options.lingerMs,
      leaderOf: (command) => this.leaderOf(command),
      onSent: (batch, seconds, error, leader) => {
        options.onPublish?.(batch.length, seconds, error === undefined);
        if (error === undefined) {
          this.lastPublishedAt = performance.now();
          if (leader !== undefined) this.failingLeaders.succeeded(leader);
          return this.health.markUp();
        }
        if (refusedForSize(error)) {
          // A broker whose message limit is below MAX_COMMAND_BYTES: these commands never fit, and
          // nothing else is wrong with Kafka, so no one else is refused for them.
          logger.error({ err: (error as Error).message }, 'the broker refused a produce as too large; check its message.max.bytes');
          const refused = new AppError({ kind: 'payloadTooLarge', detail: 'the message broker refused this write as too large' });
          return this.pending.fail(
            batch.map(({ correlationId }) => correlationId),
            refused,
          );
        }
        const slow = error instanceof PublishTimedOut || error instanceof LeaderStillBusy;
        // On a cluster, one broker down is not Kafka down: only the commands bound for it fail, their
        // reply partitions are avoided, the partitions' leaders are asked for again (the cluster moves
        // them to the brokers left), and Kafka counts as down only if the check run now fails too. A
        // produce that is only slow is no proof either: a busy broker answers late, and the check says
        // whether it answers at all.
        if (leader !== undefined && this.layout.leaders() > 1) {
          this.failingLeaders.failed(leader, error as Error);
          this.health.checkSoon();
        } else if (slow) {
          this.health.checkSoon();
        } else {
          this.health.markDown(error);
        }
        this.pending.fail(
          batch.map(({ correlationId }) => correlationId),
          publishFailure(error, options.publishTimeoutMs),
        );
      },
    });
    this.replies = new ReplyPath({
      kafka,
      settings: options.settings,
      topic: topics.replies,
      pending: this.pending,
      producer: () => this.producer.current(),
      isStopping: () => this.stopping,
      onRead: options.onReplyRead,
      logger,
    });
  }

  /** The broker the command's partition is led by, as far as the layout knows. */
  private leaderOf({
    topic,
    message,
  }: {
    topic: string;
    message: { key?: Buffer | string | null; partition?: number };
  }): number | undefined {
    const partition = message.partition ?? (message.key == null ? undefined : this.layout.partitionOf(topic, message.key.toString()));
    return partition === undefined ? undefined : this.layout.leaderOf(topic, partition);
  }

  /** Whether replies may be sent to this partition: its leader has not failed a produce lately. */
  private replyPartitionHealthy(partition: number): boolean {
    return this.failingLeaders.none() || this.failingLeaders.healthy(this.layout.leaderOf(this.options.topics.replies, partition));
  }

  /** Asks the broker for the topics' partitions: the health check, and the layout `partitionOf` reads. */
  private async describeTopics(): Promise<void> {
    const { replies, tripLocations, vehicleGroups } = this.options.topics;
    this.layout.update(
      (await this.admin.ask((admin) => admin.fetchTopicMetadata({ topics: [replies, tripLocations, vehicleGroups] }))).topics,
    );
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.admin.connect();
    await this.describeTopics();
    await this.replies.start();
    this.started = true;
    this.health.start();
  }

  /** True while commands can be published and replies received. */
  isReady(): boolean {
    return this.started && !this.stopping && this.health.isUp() && this.replies.isUp();
  }

  /** Why the bus is not ready, for /readyz; undefined when it is. */
  notReadyReason(): string | undefined {
    if (this.isReady()) return undefined;
    if (this.started && !this.stopping && this.replies.ownsNone()) {
      return `this gateway owns no partition of ${this.options.topics.replies}: run no more gateways than its partitions`;
    }
    return undefined;
  }

  /** The partition of `topic` a message keyed `key` lands on; undefined while the topic is not described. */
  partitionOf(topic: string, key: string): number | undefined {
    return this.layout.partitionOf(topic, key);
  }

  pendingCount(): number {
    return this.pending.size;
  }

  /** Commands accepted and not yet handed to the Kafka producer; each waits for its reply too. */
  unsentCount(): number {
    return this.publisher.unsentCount();
  }

  /**
   * Why `count` more commands cannot be published now, if they cannot: the gateway is stopping, the
   * broker is away, or they would not fit under maxPending.
   */
  refusal(count = 1): AppError | undefined {
    if (this.stopping) return new AppError({ kind: 'shuttingDown', retryAfterSeconds: 1 });
    if (!this.isReady()) return new AppError({ kind: 'brokerUnavailable', retryAfterSeconds: 1 });
    if (this.pending.size + count > this.options.maxPending) {
      return new AppError({
        kind: 'tooManyInFlight',
        detail: `${count} more would exceed the ${this.options.maxPending} commands this gateway lets wait for a reply (MAX_IN_FLIGHT)`,
        retryAfterSeconds: 1,
      });
    }
    if (this.admission.admits(this.pending.oldestStartedAt())) return undefined;
    return new AppError({
      kind: 'busy',
      detail: `writes wait over ${this.options.maxQueueAgeMs} ms for their confirmation (MAX_QUEUE_AGE_MS); nothing of this request was sent`,
      retryAfterSeconds: 1,
    });
  }

  /** The 503 of a bus with maxPending commands waiting already, before a request's body is even read. */
  fullRefusal(): AppError | undefined {
    return this.pending.size >= this.options.maxPending ? this.refusal(1) : undefined;
  }

  /** Publishes a command and resolves with the writer's reply. Fails with a 503 AppError, never hangs. */
  request(command: CommandRequest): Promise<CommandReply> {
    const refusal = this.refusal(1);
    if (refusal) return Promise.reject(refusal);
    try {
      const value = encode(command.value);
      const bytes = Buffer.byteLength(value);
      if (bytes > MAX_COMMAND_BYTES) throw tooLarge(bytes);
      return this.publish(command, { value, commands: 1 }).then(single);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /**
   * Publishes every list or none of them (MAX_IN_FLIGHT counts their commands), each as one message, in
   * order, and resolves with each list's replies in its order; rejects with the first failure (a 503
   * AppError), never hangs. A list too heavy for one message goes as several, in order; a request with a
   * single command too heavy for one is refused whole (413) before any is published.
   */
  requestLists(lists: readonly CommandListRequest[]): Promise<CommandReply[][]> {
    const refusal = this.refusal(lists.reduce((sum, list) => sum + list.values.length, 0));
    if (refusal) return Promise.reject(refusal);
    let encoded: Encoded[][];
    try {
      encoded = lists.map(({ values }) => encodeList(values));
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return Promise.all(
      lists.map((list, at) =>
        Promise.all(encoded[at]!.map((part) => this.publish(list, part).then(listOf(part.commands)))).then((parts) => parts.flat()),
      ),
    );
  }

  private publish(command: Omit<CommandRequest, 'value'>, { value, commands }: Encoded): Promise<PendingAnswer> {
    const replyPartition = this.replies.pick((partition) => this.replyPartitionHealthy(partition));
    if (replyPartition === undefined) return Promise.reject(new AppError({ kind: 'brokerUnavailable', retryAfterSeconds: 1 }));
    const correlationId = `${this.replies.tag}-${randomUUID()}`;
    const reply = this.pending.add(correlationId, commands, replyPartition);
    this.publisher.publish({
      topic: command.topic,
      correlationId,
      commands,
      message: {
        key: command.key,
        partition: command.partition,
        value,
        headers: {
          ...command.headers,
          [headers.correlationId]: correlationId,
          [headers.replyTopic]: this.options.topics.replies,
          [headers.replyPartition]: String(replyPartition),
        },
      },
    });
    return reply;
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.health.stop();
    // In-flight requests still get their replies (or their timeouts) before the consumer goes.
    await this.pending.drained(this.options.replyTimeoutMs);
    await Promise.allSettled([this.replies.stop(), this.producer.disconnect(), this.admin.close()]);
  }
}

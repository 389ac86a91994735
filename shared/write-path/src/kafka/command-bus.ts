// The gateway's side of the command protocol: publish a command naming one of this gateway's reply
// partitions, wait for the writer's reply there. Composes a batching publisher, the table of requests
// waiting for replies, the reply listener and the partitions it owns, the broker's health and the
// reply-path probe; each is one module of this folder.
import { randomBytes, randomUUID } from 'node:crypto';
import { timeout, TimeoutStrategy } from 'cockatiel';
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '@fleet/shared/logger';
import { AppError } from '@fleet/shared/errors';
import { KAFKA_REQUEST_TIMEOUT_MS, producerConfig, type KafkaClientSettings } from '@fleet/shared/kafka/client';
import { RenewingProducer } from '@fleet/shared/kafka/renewing-producer';
import { PRODUCE_BYTES } from '@fleet/shared/kafka/produce-size';
import { TopicLayout } from '@fleet/shared/kafka/topic-layout';
import { headers, type Topics } from '@fleet/shared/kafka/topics';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import { BatchingPublisher, LeaderStillBusy, PublishTimedOut } from './batching-publisher';
import { encode, encodeList, MAX_COMMAND_BYTES, publishFailure, refusedForSize, tooLarge, type Encoded } from './command-encoding';
import { BrokerHealth } from './broker-health';
import { PendingReplies, type PendingAnswer } from './pending-replies';
import { ReplyListener } from './reply-listener';
import { ReplyPartitions } from './reply-partitions';
import { QueueAgeAdmission } from './queue-age-admission';
import { ReplyPathProbe } from './reply-path-probe';

export interface CommandBusOptions {
  kafka: Kafka;
  topics: Topics;
  /** Unique per running gateway; names its reply consumer group. */
  instanceId: string;
  settings: KafkaClientSettings;
  logger: Logger;
  /** How long a request waits for its writer's reply before answering 503. */
  replyTimeoutMs: number;
  /**
   * The most commands waiting for a reply at once. Past it a request is refused with a 503 at once
   * rather than held: behind a slow writer it would only wait out replyTimeoutMs, and each one waiting
   * holds its request, its body and a socket.
   */
  maxPending: number;
  /** How long a produce may take before the broker is considered unavailable. */
  publishTimeoutMs: number;
  /**
   * Past this, with a request waiting longer and no prompt reply for a second, new commands are refused
   * with a retry-safe 503 at once (QueueAgeAdmission); 0 admits every command.
   */
  maxQueueAgeMs: number;
  /** Kafka's linger.ms; see BatchingPublisherOptions.lingerMs. */
  lingerMs: number;
  /** Observes each produce: batch size and seconds taken. */
  onPublish?: (size: number, seconds: number, ok: boolean) => void;
  /** Observes each request that was published: seconds from request() to the reply, or to its timeout. */
  onReply?: (seconds: number, outcome: 'replied' | 'timeout') => void;
  /** Counts each reply entry the listener reads: this gateway's own, or another's. */
  onReplyRead?: (owner: 'self' | 'other') => void;
}

export interface CommandRequest {
  topic: string;
  /** Places the message (the producer's partitioner) unless `partition` does; null with a partition. */
  key: string | null;
  partition?: number;
  value: unknown;
  headers?: Record<string, string>;
}

/**
 * Commands published as one message: they reach one partition in their order, cost one record, one
 * correlation id and one reply entry, and are stored and answered as the message's. They share a key,
 * or they share a partition (`partitionOf` of each command's key) and name it.
 */
export interface CommandListRequest {
  topic: string;
  key: string | null;
  partition?: number;
  values: readonly unknown[];
  headers?: Record<string, string>;
}

/** A reply not of the shape the message asked for is a writer's fault, never the client's: a 500. */
function mismatch(detail: string): AppError {
  return new AppError({ kind: 'internal', cause: new Error(`reply of the wrong shape: ${detail}`) });
}

function single(answer: PendingAnswer): CommandReply {
  if (Array.isArray(answer)) throw mismatch('a list of replies to one command');
  return answer;
}

function listOf(length: number) {
  return (answer: PendingAnswer): CommandReply[] => {
    if (!Array.isArray(answer) || answer.length !== length) throw mismatch(`expected ${length} replies to a list of commands`);
    return answer;
  };
}

/** How often the broker is checked while it is up. */
const HEALTH_INTERVAL_MS = 5000;
/** After a produce to one leader failed, the soonest the partitions' leaders are asked for again. */
const LEADERS_REFRESH_MS = 1000;
/** The most commands sent in one produce request. */
const MAX_BATCH_SIZE = 2000;
/** How long start() waits for the reply group to assign this gateway its partitions and for their probes. */
const REPLY_PATH_TIMEOUT_MS = 60_000;
export class CommandBus {
  private readonly producer: RenewingProducer;
  private readonly admin: Admin;
  private readonly pending: PendingReplies;
  private readonly publisher: BatchingPublisher;
  private readonly health: BrokerHealth;
  private readonly replies: ReplyListener;
  private readonly probe: ReplyPathProbe;
  private readonly admission: QueueAgeAdmission;
  private readonly partitions = new ReplyPartitions();
  private readonly layout = new TopicLayout();
  /** Brokers whose last produce failed while on a cluster: replies are not sent their way. */
  private readonly failingLeaders = new Set<number>();
  private leadersAskedAt = 0;
  /** performance.now() of the last produce the broker confirmed. */
  private lastPublishedAt = Number.NEGATIVE_INFINITY;
  /** Starts every correlation id this gateway hands out, so a reply read is known for its own or another's. */
  private readonly tag = randomBytes(4).toString('hex');
  private assignedOnce: (confirming: Promise<void>) => void = () => undefined;
  private readonly firstAssignment = new Promise<Promise<void>>((resolve) => (this.assignedOnce = resolve));
  private started = false;
  private stopping = false;

  constructor(private readonly options: CommandBusOptions) {
    const { kafka, topics, logger } = options;
    this.producer = new RenewingProducer({
      kafka,
      // The bus bounds each produce itself; kafkajs's own retries would only hold a request longer.
      config: producerConfig(options.settings.allowAutoTopicCreation, { retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 } }),
      logger,
    });
    this.admin = kafka.admin();
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
          if (leader !== undefined) this.failingLeaders.delete(leader);
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
          if (!this.failingLeaders.has(leader)) {
            logger.warn(
              { broker: leader, err: (error as Error).message },
              'a Kafka broker refused or timed out a produce; its partitions answer 503 until their leaders move',
            );
          }
          this.failingLeaders.add(leader);
          this.askLeaders();
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
    this.probe = new ReplyPathProbe({ producer: () => this.producer.current(), topic: topics.replies });
    this.replies = new ReplyListener({
      kafka,
      settings: options.settings,
      topic: topics.replies,
      // One group for every gateway on these topics: each is assigned its share of the reply partitions.
      groupId: `${topics.replies}.gateways`,
      pending: this.pending,
      partitions: this.partitions,
      ownerTag: this.tag,
      onAssigned: (partitions) => this.assigned(partitions),
      onProbe: (probeId) => this.probe.arrived(probeId),
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

  /** Refreshes the layout's leaders now, at most once a LEADERS_REFRESH_MS. */
  private askLeaders(): void {
    if (Date.now() - this.leadersAskedAt < LEADERS_REFRESH_MS) return;
    this.leadersAskedAt = Date.now();
    this.describeTopics().catch(() => undefined);
  }

  /** Whether replies may be sent to this partition: its leader has not failed a produce lately. */
  private replyPartitionHealthy(partition: number): boolean {
    if (this.failingLeaders.size === 0) return true;
    const leader = this.layout.leaderOf(this.options.topics.replies, partition);
    return leader === undefined || !this.failingLeaders.has(leader);
  }

  /** Asks the broker for the topics' partitions: the health check, and the layout `partitionOf` reads. */
  private async describeTopics(): Promise<void> {
    const { topics } = this.options;
    const metadata = await this.admin.fetchTopicMetadata({ topics: [topics.replies, topics.tripLocations, topics.vehicleGroups] });
    this.layout.update(metadata.topics);
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.admin.connect();
    await this.describeTopics();
    await this.replies.start();
    const giveUp = timeout(REPLY_PATH_TIMEOUT_MS, TimeoutStrategy.Aggressive);
    await giveUp
      .execute(async () => await await this.firstAssignment)
      .catch((error: Error) => {
        throw new Error(`the reply consumer did not start reading within ${REPLY_PATH_TIMEOUT_MS / 1000} s: ${error.message}`, {
          cause: error,
        });
      });
    this.started = true;
    this.health.start();
  }

  /**
   * A new assignment of reply partitions: requests named on a partition that moved away are answered a
   * retry-safe 503 now (their replies reach another gateway), and new partitions are probed before use.
   */
  private assigned(partitions: number[]): void {
    const lost = this.partitions.assign(partitions);
    const { logger, topics } = this.options;
    if (lost.length > 0) {
      const failed = this.pending.failOnPartitions(
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
        { topic: topics.replies },
        'this gateway owns no partition of the reply topic (more gateways than its partitions); it answers writes 503 until it is given one',
      );
    }
    const confirming = this.probe.confirm(this.partitions.unconfirmed(), {
      confirmed: (partition) => this.partitions.confirm(partition),
      wanted: (partition) => !this.stopping && this.partitions.ownedList().includes(partition),
    });
    this.assignedOnce(confirming);
  }

  /** True while commands can be published and replies received. */
  isReady(): boolean {
    return this.started && !this.stopping && this.health.isUp() && this.replies.isUp() && this.partitions.hasUsable();
  }

  /** Why the bus is not ready, for /readyz; undefined when it is. */
  notReadyReason(): string | undefined {
    if (this.isReady()) return undefined;
    if (this.started && !this.stopping && this.partitions.ownedList().length === 0) {
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
    const replyPartition = this.partitions.pick((partition) => this.replyPartitionHealthy(partition));
    if (replyPartition === undefined) return Promise.reject(new AppError({ kind: 'brokerUnavailable', retryAfterSeconds: 1 }));
    const correlationId = `${this.tag}-${randomUUID()}`;
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
    await Promise.allSettled([this.replies.stop(), this.producer.disconnect(), this.admin.disconnect()]);
  }
}

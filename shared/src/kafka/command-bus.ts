// The gateway's side of the command protocol: publish a command, wait for the writer's reply.
//
// Commands from concurrent requests are gathered while a produce is in flight and sent as one batch,
// so throughput grows with load instead of paying a broker round trip per request. Every gateway
// instance reads the reply topic through a consumer group of its own, so each reply reaches the
// instance that asked however many run; replies for other instances are skipped by correlation id.
import { randomUUID } from 'node:crypto';
import type { Admin, Kafka, KafkaMessage, Message, Producer } from 'kafkajs';
import { delay, withTimeout } from '../deadline';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import { commandReplySchema, type AddressedReply, type CommandReply } from '../schemas/reply.schema';
import { producerConfig } from './client';
import { superviseConsumer, type SupervisedConsumer } from './supervised-consumer';
import { headers, type Topics } from './topics';

export interface CommandBusOptions {
  kafka: Kafka;
  topics: Topics;
  /** Unique per running gateway; names its reply consumer group. */
  instanceId: string;
  /** How long the broker may hold an empty fetch of replies (KAFKA_FETCH_MAX_WAIT_MS). */
  fetchMaxWaitMs?: number;
  logger: Logger;
  /** How long a request waits for its writer's reply before answering 503. */
  replyTimeoutMs: number;
  /** How long a produce may take before the broker is considered unavailable. */
  publishTimeoutMs: number;
  /** How often the broker is checked (more often while it is down). */
  healthIntervalMs?: number;
  /** The most commands sent in one produce request. */
  maxBatchSize?: number;
  /**
   * The shortest time between two produce requests (Kafka's linger.ms): commands gather meanwhile, so a
   * busy gateway sends few large record batches rather than many small ones. 0 sends at once.
   */
  lingerMs?: number;
  /** Observes each produce: batch size and seconds taken. */
  onPublish?: (size: number, seconds: number, ok: boolean) => void;
  /** Observes each request that was published: seconds from request() to the reply, or to its timeout. */
  onReply?: (seconds: number, outcome: 'replied' | 'timeout') => void;
}

export interface CommandRequest {
  topic: string;
  key: string;
  value: unknown;
  headers?: Record<string, string>;
}

interface Pending {
  resolve: (reply: CommandReply) => void;
  reject: (error: AppError) => void;
  /** performance.now() when request() was called. */
  startedAt: number;
}

interface Queued {
  topic: string;
  message: Message;
  correlationId: string;
}

const PROBE_HEADER = 'reply-probe';

/** How often overdue requests are looked for: a timeout is answered at most 5% (and 100 ms) late. */
function expiryCheckInterval(replyTimeoutMs: number): number {
  return Math.min(100, Math.max(5, Math.floor(replyTimeoutMs / 20)));
}

/** Reply batches cost microseconds to handle; processing partitions one by one only adds waiting. */
const REPLY_PARTITIONS_AT_ONCE = 16;

export class CommandBus {
  private readonly producer: Producer;
  private replyConsumer: SupervisedConsumer | undefined;
  /** True while a crashed reply consumer is being replaced: no reply could arrive. */
  private repliesDown = false;
  private readonly admin: Admin;
  /**
   * Requests waiting for their reply, oldest first: every request waits the same replyTimeoutMs, so the
   * order of insertion is the order of expiry, and one sweep finds the expired ones at the head instead of
   * a timer being set and cleared for every request.
   */
  private readonly pending = new Map<string, Pending>();
  private expiryTimer: NodeJS.Timeout | undefined;
  private queue: Queued[] = [];
  private flushing = false;
  private brokerDownSince: number | undefined;
  private started = false;
  private stopping = false;
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly probes = new Map<string, () => void>();

  constructor(private readonly options: CommandBusOptions) {
    const { kafka } = options;
    this.producer = kafka.producer(
      // The bus bounds each produce itself; kafkajs's own retries would only hold a request longer.
      producerConfig({ retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 } }),
    );
    this.admin = kafka.admin();
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.admin.connect();
    const groupId = `${this.options.topics.replies}.${this.options.instanceId}`;
    this.replyConsumer = await superviseConsumer({
      name: groupId,
      logger: this.options.logger,
      create: () =>
        this.options.kafka.consumer({
          groupId,
          allowAutoTopicCreation: true,
          maxWaitTimeInMs: this.options.fetchMaxWaitMs ?? 100,
          sessionTimeout: 30_000,
          heartbeatInterval: 3000,
        }),
      run: async (consumer) => {
        await consumer.connect();
        await consumer.subscribe({ topic: this.options.topics.replies, fromBeginning: false });
        await consumer.run({
          // Replies matter only to the requests waiting now, so their offsets are never committed: a
          // commit per batch would add a broker round trip to every reply, and a restarted consumer
          // starting at the latest offset only turns the replies it missed into retryable 503s.
          autoCommit: false,
          partitionsConsumedConcurrently: REPLY_PARTITIONS_AT_ONCE,
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) this.onReplyMessage(message);
          },
        });
      },
      onDown: () => {
        this.repliesDown = true;
      },
      onUp: () => {
        this.repliesDown = false;
      },
    });
    await this.awaitReplyPath();
    this.started = true;
    this.scheduleHealthCheck();
  }

  /** True while commands can be published and replies received. */
  isReady(): boolean {
    return this.started && !this.stopping && this.brokerDownSince === undefined && !this.repliesDown;
  }

  pendingCount(): number {
    return this.pending.size;
  }

  /** Publishes a command and resolves with the writer's reply. Fails with a 503 AppError, never hangs. */
  request(command: CommandRequest): Promise<CommandReply> {
    if (this.stopping) return Promise.reject(new AppError({ kind: 'shuttingDown', retryAfterSeconds: 1 }));
    if (!this.started || this.brokerDownSince !== undefined || this.repliesDown) {
      return Promise.reject(new AppError({ kind: 'brokerUnavailable', retryAfterSeconds: 1 }));
    }
    const correlationId = randomUUID();
    const startedAt = performance.now();
    return new Promise<CommandReply>((resolve, reject) => {
      this.pending.set(correlationId, { resolve, reject, startedAt });
      this.expiryTimer ??= setInterval(() => this.expireRequests(), expiryCheckInterval(this.options.replyTimeoutMs));
      this.queue.push({
        topic: command.topic,
        correlationId,
        message: {
          key: command.key,
          value: JSON.stringify(command.value),
          headers: {
            ...command.headers,
            [headers.correlationId]: correlationId,
            [headers.replyTopic]: this.options.topics.replies,
          },
        },
      });
      this.scheduleFlush();
    });
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.healthTimer);
    // In-flight requests still get their replies (or their timeouts) before the consumer goes.
    const deadline = Date.now() + this.options.replyTimeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) await delay(20);
    await Promise.allSettled([this.replyConsumer?.stop(), this.producer.disconnect(), this.admin.disconnect()]);
  }

  /** A reply message carries the replies to many commands, from any gateway; those not waited for here are skipped. */
  private onReplyMessage(message: KafkaMessage): void {
    if (message.headers?.[PROBE_HEADER]) {
      const probeId = message.headers[headers.correlationId]?.toString();
      if (probeId) this.probes.get(probeId)?.();
      return;
    }
    if (!message.value) return;
    let replies: unknown;
    try {
      replies = JSON.parse(message.value.toString('utf8'));
    } catch (error) {
      this.options.logger.error({ err: (error as Error).message, offset: message.offset }, 'unreadable reply message');
      return;
    }
    if (!Array.isArray(replies)) return;
    for (const addressed of replies as Array<Partial<AddressedReply> | null>) {
      const correlationId = addressed?.correlationId;
      if (typeof correlationId !== 'string') continue;
      const entry = this.pending.get(correlationId);
      if (!entry) continue;
      this.pending.delete(correlationId);
      this.options.onReply?.((performance.now() - entry.startedAt) / 1000, 'replied');
      const parsed = commandReplySchema.safeParse(addressed?.reply);
      if (parsed.success) {
        entry.resolve(parsed.data);
      } else {
        this.options.logger.error({ issues: parsed.error.issues, correlationId }, 'unreadable reply from a writer');
        entry.reject(new AppError({ kind: 'internal', cause: parsed.error }));
      }
    }
  }

  /** Answers 503 to the requests whose reply is overdue; stops checking once none is waiting. */
  private expireRequests(): void {
    const now = performance.now();
    for (const [correlationId, entry] of this.pending) {
      const waited = now - entry.startedAt;
      if (waited < this.options.replyTimeoutMs) break;
      this.pending.delete(correlationId);
      this.options.onReply?.(waited / 1000, 'timeout');
      entry.reject(
        new AppError({
          kind: 'replyTimeout',
          detail: `no reply within ${this.options.replyTimeoutMs} ms; retrying is safe`,
          retryAfterSeconds: 1,
        }),
      );
    }
    if (this.pending.size === 0) {
      clearInterval(this.expiryTimer);
      this.expiryTimer = undefined;
    }
  }

  /** Requests arriving in the same turn of the event loop, or while a produce is in flight, share a batch. */
  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    const linger = this.options.lingerMs ?? 0;
    if (linger > 0) setTimeout(() => void this.flush(), linger);
    else setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const maxBatchSize = this.options.maxBatchSize ?? 2000;
    const linger = this.options.lingerMs ?? 0;
    try {
      while (this.queue.length > 0) {
        const startedAt = performance.now();
        await this.publish(this.queue.splice(0, maxBatchSize));
        // Under load the next batch is already waiting; it still lingers out the rest of the interval.
        const rest = linger - (performance.now() - startedAt);
        if (rest > 0 && this.queue.length < maxBatchSize) await delay(rest);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async publish(batch: Queued[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const { topic, message } of batch) {
      const messages = byTopic.get(topic) ?? [];
      messages.push(message);
      byTopic.set(topic, messages);
    }
    const started = process.hrtime.bigint();
    try {
      await withTimeout(
        this.producer.sendBatch({
          acks: -1,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        }),
        this.options.publishTimeoutMs,
        'publishing to Kafka',
      );
      this.options.onPublish?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9, true);
      this.markBrokerUp();
    } catch (error) {
      this.options.onPublish?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9, false);
      this.markBrokerDown(error);
      for (const { correlationId } of batch) {
        const entry = this.pending.get(correlationId);
        if (!entry) continue;
        this.pending.delete(correlationId);
        entry.reject(
          new AppError({
            kind: 'brokerUnavailable',
            detail: 'the command could not be published; retrying is safe',
            retryAfterSeconds: 1,
            cause: error,
          }),
        );
      }
    }
  }

  private markBrokerDown(error: unknown): void {
    if (this.brokerDownSince !== undefined) return;
    this.brokerDownSince = Date.now();
    this.options.logger.error({ err: (error as Error).message }, 'Kafka is unavailable; answering 503 until it returns');
    this.scheduleHealthCheck();
  }

  private markBrokerUp(): void {
    if (this.brokerDownSince === undefined) return;
    this.options.logger.info({ downForMs: Date.now() - this.brokerDownSince }, 'Kafka is available again');
    this.brokerDownSince = undefined;
  }

  /** Checks the broker in the background, so readiness reflects an outage even without traffic. */
  private scheduleHealthCheck(): void {
    clearTimeout(this.healthTimer);
    if (this.stopping) return;
    const interval = this.options.healthIntervalMs ?? 5000;
    this.healthTimer = setTimeout(
      async () => {
        try {
          await withTimeout(
            this.admin.fetchTopicMetadata({ topics: [this.options.topics.replies] }),
            this.options.publishTimeoutMs,
            'a broker health check',
          );
          this.markBrokerUp();
        } catch (error) {
          this.markBrokerDown(error);
        }
        this.scheduleHealthCheck();
      },
      this.brokerDownSince === undefined ? interval : Math.min(interval, 1000),
    );
    this.healthTimer.unref();
  }

  /**
   * A new consumer group starts reading at the latest offset only once it has fetched, so a reply sent
   * before then would be missed. A probe on every partition of the reply topic proves the consumer is
   * positioned before the gateway takes any request.
   */
  private async awaitReplyPath(): Promise<void> {
    const topic = this.options.topics.replies;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const metadata = await this.admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = metadata.topics[0]?.partitions.map((p) => p.partitionId) ?? [];
      if (partitions.length === 0) {
        await delay(200);
        continue;
      }
      const ids = partitions.map(() => randomUUID());
      const arrived = ids.map((id) => new Promise<void>((resolve) => this.probes.set(id, resolve)));
      await this.producer.send({
        topic,
        acks: -1,
        messages: partitions.map((partition, index) => ({
          partition,
          value: null,
          headers: { [headers.correlationId]: ids[index]!, [PROBE_HEADER]: '1' },
        })),
      });
      const ok = await withTimeout(Promise.all(arrived), 2000, 'the reply probe').then(
        () => true,
        () => false,
      );
      for (const id of ids) this.probes.delete(id);
      if (ok) return;
      if (Date.now() > deadline) throw new Error('the reply consumer did not start reading within 60 s');
    }
  }
}

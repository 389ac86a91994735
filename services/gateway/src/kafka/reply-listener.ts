// Reads the reply topic for one gateway. Every gateway instance reads it through a consumer group of its
// own, so each reply reaches the instance that asked however many run; replies for other instances are
// skipped by correlation id. A message is either a reply probe (see reply-path-probe.ts) or an array of
// addressed replies, each holding one reply or, for a list of commands, a list of them.
import type { Kafka, KafkaMessage } from 'kafkajs';
import {
  AppError,
  commandRepliesSchema,
  commandReplySchema,
  consumerConfig,
  superviseConsumer,
  headers,
  type Logger,
  type KafkaClientSettings,
  type SupervisedConsumer,
} from '@fleet/shared';
import type { PendingReplies } from './pending-replies';

/** Marks a reply-path probe; its correlation id names the probe. */
export const PROBE_HEADER = 'reply-probe';

/** Reply batches cost microseconds to handle; processing partitions one by one only adds waiting. */
const REPLY_PARTITIONS_AT_ONCE = 16;

/** An element of a reply message as it arrives, before its reply is checked (an AddressedReply when sound). */
export interface IncomingReply {
  correlationId?: unknown;
  reply?: unknown;
  replies?: unknown;
}

export type ReplyMessage =
  | { kind: 'probe'; probeId: string }
  | { kind: 'replies'; replies: Array<IncomingReply | null> }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'ignored' };

/** What a message on the reply topic holds. */
export function readReplyMessage(message: Pick<KafkaMessage, 'headers' | 'value'>): ReplyMessage {
  if (message.headers?.[PROBE_HEADER]) {
    const probeId = message.headers[headers.correlationId]?.toString();
    return probeId ? { kind: 'probe', probeId } : { kind: 'ignored' };
  }
  if (!message.value) return { kind: 'ignored' };
  let replies: unknown;
  try {
    replies = JSON.parse(message.value.toString('utf8'));
  } catch (error) {
    return { kind: 'unreadable', reason: (error as Error).message };
  }
  return Array.isArray(replies) ? { kind: 'replies', replies } : { kind: 'ignored' };
}

export interface ReplyListenerOptions {
  kafka: Kafka;
  settings: KafkaClientSettings;
  topic: string;
  groupId: string;
  pending: PendingReplies;
  /** Told of each probe that arrives. */
  onProbe: (probeId: string) => void;
  logger: Logger;
}

/**
 * A reply group has one member, this gateway. A consumer that restarts (as after the broker itself
 * restarted) joins as a new member, and the group assigns nothing until the old member's session has
 * ended: that session is how long writes go unanswered once Kafka is back. 6 s is the broker's minimum.
 */
const REPLY_SESSION_TIMEOUT_MS = 6000;

export class ReplyListener {
  private consumer: SupervisedConsumer | undefined;
  /** True while a crashed consumer is being replaced: no reply could arrive. */
  private down = false;

  constructor(private readonly options: ReplyListenerOptions) {}

  isUp(): boolean {
    return this.consumer !== undefined && !this.down;
  }

  async start(): Promise<void> {
    const { kafka, settings, topic, groupId, logger } = this.options;
    this.consumer = await superviseConsumer({
      name: groupId,
      logger,
      create: () => kafka.consumer(consumerConfig(groupId, { ...settings, sessionTimeoutMs: REPLY_SESSION_TIMEOUT_MS })),
      run: async (consumer) => {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: false });
        await consumer.run({
          // Replies matter only to the requests waiting now, so their offsets are never committed: a
          // commit per batch would add a broker round trip to every reply, and a restarted consumer
          // starting at the latest offset only turns the replies it missed into retryable 503s.
          autoCommit: false,
          partitionsConsumedConcurrently: REPLY_PARTITIONS_AT_ONCE,
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) this.onMessage(message);
          },
        });
      },
      onDown: () => {
        this.down = true;
      },
      onUp: () => {
        this.down = false;
      },
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
  }

  private onMessage(message: KafkaMessage): void {
    const read = readReplyMessage(message);
    if (read.kind === 'probe') return this.options.onProbe(read.probeId);
    if (read.kind === 'unreadable') {
      this.options.logger.error({ err: read.reason, offset: message.offset }, 'unreadable reply message');
      return;
    }
    if (read.kind !== 'replies') return;
    for (const addressed of read.replies) this.deliver(addressed);
  }

  private deliver(addressed: IncomingReply | null): void {
    const correlationId = addressed?.correlationId;
    if (typeof correlationId !== 'string' || !this.options.pending.has(correlationId)) return;
    const parsed =
      addressed?.replies === undefined ? commandReplySchema.safeParse(addressed?.reply) : commandRepliesSchema.safeParse(addressed.replies);
    if (parsed.success) {
      this.options.pending.reply(correlationId, { reply: parsed.data });
      return;
    }
    this.options.logger.error({ issues: parsed.error.issues, correlationId }, 'unreadable reply from a writer');
    this.options.pending.reply(correlationId, { error: new AppError({ kind: 'internal', cause: parsed.error }) });
  }
}

// Reads this gateway's partitions of the reply topic. Every gateway is a member of one consumer group on
// the topic, which gives each its share of the partitions (reply-partitions.ts); the replies to this
// gateway's requests are written to its partitions, so it reads its own replies and, only while
// ownership moves, a few of another's, which it skips by correlation id. A message is either a reply
// probe (see reply-path-probe.ts) or an array of addressed replies, each holding one reply or, for a list
// of commands, a list of them.
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@fleet/shared/logger';
import { AppError } from '@fleet/shared/errors';
import { consumerConfig, type KafkaClientSettings } from '@fleet/shared/kafka/client';
import { OffsetCommitter } from '@fleet/shared/kafka/offset-committer';
import { superviseConsumer, type SupervisedConsumer } from '@fleet/shared/kafka/supervised-consumer';
import { headers } from '@fleet/shared/kafka/topics';
import { commandRepliesSchema, commandReplySchema } from '@fleet/shared/schemas/reply.schema';
import type { PendingReplies } from './pending-replies';
import { stickyAssigner, type ReplyPartitions } from './reply-partitions';

/** Marks a reply-path probe; its correlation id names the probe. */
export const PROBE_HEADER = 'reply-probe';

/**
 * The most reply partitions one member reads. Requests name one of them (the lowest healthy one); the
 * others are there for when its leader fails, and four span every leader of a three-node cluster. Every
 * fetch lists each partition a consumer holds, and without fetch sessions (which kafkajs lacks) the
 * broker reads each one at every fetch: a lone gateway holding all the topic's partitions cost the broker
 * that many partition reads for every reply, and more while idle.
 */
export const REPLY_PARTITIONS_PER_MEMBER = 4;

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
  /** The group every gateway on this topic joins. */
  groupId: string;
  pending: PendingReplies;
  /** What this gateway owns, told to the group when it joins. */
  partitions: ReplyPartitions;
  /** Starts every correlation id this gateway hands out: a reply read is its own or another's. */
  ownerTag: string;
  /** Told of each assignment of the reply topic's partitions to this gateway. */
  onAssigned: (partitions: number[]) => void;
  /** Told of each probe that arrives, with the partition it came on. */
  onProbe: (probeId: string, partition: number) => void;
  /** Counts each reply entry read, as this gateway's own or another's. */
  onRead?: (owner: 'self' | 'other') => void;
  logger: Logger;
}

/**
 * A consumer that restarts (as after the broker itself restarted) joins as a new member, and its old
 * member's partitions are reassigned only once that member's session has ended: the session is how long
 * the requests named on them go unanswered. 6 s is the broker's minimum.
 */
const REPLY_SESSION_TIMEOUT_MS = 6000;
/**
 * Positions are committed this often, so that a partition kept across a rebalance is read on from where
 * it was, not from the end: replies written while the group rebalanced are still read. By a timer, not
 * kafkajs's autoCommit, which for eachBatch commits after every batch whatever its interval: a broker
 * round trip in each partition's cycle, and a commit refused by a coordinator gone away failed the
 * batch and stopped every fetch with it.
 */
const REPLY_COMMIT_INTERVAL_MS = 1000;

export class ReplyListener {
  private consumer: SupervisedConsumer | undefined;
  /** True while a crashed consumer is being replaced: no reply could arrive. */
  private down = false;
  private readonly offsets: OffsetCommitter;
  private committer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ReplyListenerOptions) {
    this.offsets = new OffsetCommitter({ topic: options.topic, logger: options.logger });
  }

  isUp(): boolean {
    return this.consumer !== undefined && !this.down;
  }

  async start(): Promise<void> {
    const { kafka, settings, topic, groupId, logger } = this.options;
    const { offsets } = this;
    this.consumer = await superviseConsumer({
      name: groupId,
      logger,
      create: () =>
        kafka.consumer({
          ...consumerConfig(groupId, { ...settings, sessionTimeoutMs: REPLY_SESSION_TIMEOUT_MS }),
          partitionAssigners: [stickyAssigner(() => this.options.partitions.ownedList(), REPLY_PARTITIONS_PER_MEMBER)],
        }),
      run: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
          const assigned = payload.memberAssignment[topic] ?? [];
          offsets.assigned(assigned);
          this.options.onAssigned(assigned);
        });
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: false });
        await consumer.run({
          // A partition new to the group starts at its end: replies matter only to requests waiting now,
          // and a partition is used only once a probe sent to it has been read (reply-path-probe.ts).
          autoCommit: false,
          partitionsConsumedConcurrently: REPLY_PARTITIONS_AT_ONCE,
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) this.onMessage(message, batch.partition);
            offsets.stored(batch.partition, batch.lastOffset());
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
    this.committer = offsets.commitEvery(REPLY_COMMIT_INTERVAL_MS, () => this.consumer?.current());
  }

  async stop(): Promise<void> {
    clearInterval(this.committer);
    await this.consumer?.stop((current) => this.offsets.commitTo(current));
  }

  private onMessage(message: KafkaMessage, partition: number): void {
    const read = readReplyMessage(message);
    if (read.kind === 'probe') return this.options.onProbe(read.probeId, partition);
    if (read.kind === 'unreadable') {
      this.options.logger.error({ err: read.reason, offset: message.offset }, 'unreadable reply message');
      return;
    }
    if (read.kind !== 'replies') return;
    for (const addressed of read.replies) this.deliver(addressed);
  }

  private deliver(addressed: IncomingReply | null): void {
    const correlationId = addressed?.correlationId;
    const own = typeof correlationId === 'string' && correlationId.startsWith(this.options.ownerTag);
    this.options.onRead?.(own ? 'self' : 'other');
    if (!own || !this.options.pending.has(correlationId)) return;
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

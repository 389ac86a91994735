// The writers' side of the command protocol, the mechanism both writers run: consume a batch, decode it
// with the topic's wire schema (a message holds a command or a list of them), have the writer's handler
// store every command, reply to each message, and only then resolve the offsets. A crash anywhere before
// that point means redelivery, which the stores absorb idempotently; a message that cannot be decoded,
// or that the database refuses for its data, goes to the dead-letter topic with its reason instead of
// holding up its partition. The batches of one fetch (one per partition, handled concurrently) are
// stored with one call; what they send is sent one produce a partition leader, and the partitions'
// next batches are fetched and stored meanwhile, each batch's offset committed once what it sends is
// sent (batch-completion.ts): a leader that answers nothing holds up only what is bound for it.
import type { Batch, ConsumerRunConfig, EachBatchPayload, Kafka, KafkaMessage, Message } from 'kafkajs';
import type { z } from 'zod';
import { coalesce } from '../coalesce';
import type { Logger } from '../logger';
import { decodeBatch } from './batch-decoder';
import { consumerConfig, producerConfig, type KafkaClientSettings } from './client';
import { BatchCompletion } from './batch-completion';
import { InFlight } from './in-flight';
import { LeaderSends } from './leader-sends';
import { headerText } from './message-headers';
import { OffsetCommitter } from './offset-committer';
import { RenewingProducer } from './renewing-producer';
import { storeIsolatingRefusals } from './refusal-isolation';
import {
  addressedReply,
  deadLetter,
  isRefused,
  isStored,
  outgoingMessages,
  type HandledCommand,
  type Outgoing,
  type StoredCommand,
} from './reply-builder';
import { StepRetry, type BatchLease } from './retry-policy';
import { superviseConsumer } from './supervised-consumer';
import type { TopicLayout } from './topic-layout';
import { headers, type Topics } from './topics';

export type { HandledCommand, RejectedCommand, StoredCommand } from './reply-builder';

/** A message a writer publishes about what it stored, beside its replies. */
export interface Announcement {
  topic: string;
  message: Message;
}

/** What a writer supplies: the wire schema of its topic, and how a batch of commands is stored and answered. */
export interface CommandHandler<S extends z.ZodType> {
  schema: S;
  /** Stores commands and answers one result per command, in order. Must be idempotent. */
  store: (commands: Array<z.output<S>>) => Promise<HandledCommand[]>;
  /**
   * Events to publish about what a batch stored, sent in the produce that carries its replies: after
   * the commit, so a refused or rolled-back command is never announced. A command stored before is
   * announced again only when it is redelivered (StoredCommand.redelivered): at least once, for
   * readers that recognise what they have seen.
   */
  announce?: (stored: Array<{ command: z.output<S>; result: StoredCommand }>) => Announcement[];
  /**
   * The group has given this instance its partitions, anew after a rebalance: what the handler keeps of
   * the keys it saw may have been written by another instance since.
   */
  assigned?: () => void;
}

export interface CommandConsumerOptions<S extends z.ZodType> {
  kafka: Kafka;
  topics: Topics;
  topic: string;
  groupId: string;
  handler: CommandHandler<S>;
  logger: Logger;
  settings: KafkaClientSettings;
  /**
   * The partitions of the topics it sends to (replies, dead letters, announcements), with their leaders,
   * and how to ask the cluster for them again when a leader fails.
   */
  leaders: { layout: TopicLayout; refresh: () => Promise<void> };
  /** Partitions processed at once by this instance. */
  concurrency: number;
  /**
   * True when a store failed because of the data of a command (a value the database refuses), which no
   * retry can fix; any other failure is an outage and is retried.
   */
  isRefusal: (error: unknown) => boolean;
  /**
   * True when the database answered a statement with an error no retry of it is known to fix. A batch
   * failing so ISOLATE_AFTER_FAILURES times is stored command by command, and a command that fails alone
   * is set aside as a dead letter rather than holding its partition (refusal-isolation.ts).
   */
  isStatementFailure: (error: unknown) => boolean;
  metrics?: {
    batch?: (size: number) => void;
    stored?: (inserted: number, duplicates: number) => void;
    deadLettered?: (count: number) => void;
    /** A store attempt failed for a reason other than the data (PostgreSQL away or refusing); it is retried. */
    storeFailed?: () => void;
  };
}

export interface CommandConsumer {
  stop(): Promise<void>;
}

/** How often stored offsets are committed. */
const COMMIT_INTERVAL_MS = 1000;
/** How long stop() waits for the batch in progress. */
const STOP_DRAIN_MS = 10_000;
/**
 * Failed attempts at storing a batch together before its commands are stored one by one. A few, so that
 * a passing fault costs no split, and a batch that fails for good (one spanning so many partitions that
 * its locks run out) holds its partition for about a second.
 */
const ISOLATE_AFTER_FAILURES = 3;
/**
 * The most replies, announcements and dead letters handed over and not yet sent before the next batch
 * waits: a leader that answers nothing cannot fill the writer's memory.
 */
const MAX_UNSENT_MESSAGES = 20_000;
/** How many request ids an error line names; a batch can hold thousands of messages. */
const LOGGED_REQUEST_IDS = 20;

/** The request ids of a batch, for a log line, so an operator can follow a failing batch to its HTTP requests. */
function batchContext(batch: Batch): Record<string, unknown> {
  return {
    topic: batch.topic,
    partition: batch.partition,
    messages: batch.messages.length,
    requestIds: batch.messages.slice(0, LOGGED_REQUEST_IDS).map((message) => headerText(message.headers, headers.requestId)),
  };
}

export async function startCommandConsumer<S extends z.ZodType>(options: CommandConsumerOptions<S>): Promise<CommandConsumer> {
  const { kafka, topics, topic, handler, logger, metrics } = options;
  const producer = new RenewingProducer({ kafka, config: producerConfig(options.settings.allowAutoTopicCreation), logger });
  const storing = new StepRetry('storing to PostgreSQL', logger);
  const replying = new StepRetry('publishing replies', logger);
  const offsets = new OffsetCommitter({ topic, logger });
  const completion = new BatchCompletion(MAX_UNSENT_MESSAGES);
  const inFlight = new InFlight();
  /**
   * Set once stop() begins. A batch kafkajs fetched before the pause can still be handed over after the
   * drain found nothing in flight; stored then, it would miss the last commit and be stored again by the
   * partition's next owner. Left alone, it is simply that owner's first batch.
   */
  let stopping = false;

  /** The batches of one fetch are stored together; what they send goes together, a lane a leader. */
  const storeTogether = coalesce(handler.store);
  const sends = new LeaderSends({
    send: (round) => producer.sendBatch(round),
    layout: options.leaders.layout,
    refreshLeaders: options.leaders.refresh,
  });

  /**
   * Sends a batch's messages, each leader's share on its own and retried on its own: resolves true once
   * all are sent, false once the partition is no longer this member's. A retry sends its share again
   * whole: a gateway ignores a reply it has had, and a stream a position it has sent.
   */
  async function sendAll(outgoing: Outgoing[], lease: BatchLease): Promise<boolean> {
    const shares = sends.split(outgoingMessages(outgoing, topics.deadLetter));
    const sent = await Promise.all(
      shares.map((share) =>
        replying.run(async () => {
          await sends.send(share);
          return true;
        }, lease),
      ),
    );
    return sent.every((outcome) => outcome !== undefined);
  }

  function setAside(batch: Batch, message: KafkaMessage, reason: string): Outgoing {
    const requestId = headerText(message.headers, headers.requestId);
    logger.warn({ requestId, topic: batch.topic, partition: batch.partition, offset: message.offset, reason }, 'dead-lettering a message');
    return deadLetter(message, reason, batch);
  }

  async function handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0 || stopping) return;
    const lease: BatchLease = { owned: () => isRunning() && !isStale(), heartbeat, context: () => batchContext(batch) };
    const { decoded, undecodable } = decodeBatch(handler.schema, batch.messages);
    const outgoing = undecodable.map(({ message, reason }) => setAside(batch, message, reason));
    metrics?.batch?.(batch.messages.length);

    const commands = decoded.flatMap((entry) => entry.commands);
    let statementFailures = 0;
    const isolation = {
      store: handler.store,
      isRefusal: options.isRefusal,
      isStatementFailure: options.isStatementFailure,
    };
    const outcomes = commands.length
      ? await storing.run(async () => {
          const mode = statementFailures >= ISOLATE_AFTER_FAILURES ? 'one-by-one' : 'together';
          try {
            return await storeIsolatingRefusals(commands, storeTogether, isolation, mode);
          } catch (error) {
            metrics?.storeFailed?.();
            if (options.isStatementFailure(error)) statementFailures += 1;
            throw error;
          }
        }, lease)
      : [];
    if (outcomes === undefined) return;
    let next = 0;
    for (const { message, commands: ofMessage, list } of decoded) {
      const its = outcomes.slice(next, next + ofMessage.length);
      next += ofMessage.length;
      // A list with a refused command is set aside whole, once: replayed, its stored commands are found stored.
      const refusals = its.filter(isRefused);
      if (refusals.length) {
        const reason = list ? `${refusals.length} of ${its.length} commands ${refusals[0]!.refused}` : refusals[0]!.refused;
        outgoing.push(setAside(batch, message, reason));
      }
      const reply = addressedReply(message, list ? its : its[0]!);
      if (reply) outgoing.push(reply);
    }

    if (handler.announce) {
      const stored = commands.flatMap((command, index) => {
        const result = outcomes[index];
        const announced = result && isStored(result) && !result.silent && (!result.duplicate || result.redelivered);
        return announced ? [{ command, result }] : [];
      });
      if (stored.length) outgoing.push(...handler.announce(stored).map((event) => ({ event })));
    }
    // The partition's next batch is fetched now; this one's offset is committed once it is sent.
    await completion.hasRoom();
    const sending = outgoing.length ? sendAll(outgoing, lease) : Promise.resolve(true);
    const lastOffset = batch.lastOffset();
    resolveOffset(lastOffset);
    void inFlight.run(() =>
      completion.track(batch.partition, outgoing.length, sending, () => {
        offsets.stored(batch.partition, lastOffset);
        const stored = outcomes.filter(isStored);
        const duplicates = stored.filter((result) => result.duplicate).length;
        metrics?.stored?.(stored.length - duplicates, duplicates);
        const deadLettered = outgoing.filter((item) => 'deadLetter' in item).length;
        if (deadLettered) metrics?.deadLettered?.(deadLettered);
      }),
    );
    // Per message, so a request id found in the gateway's log leads to the row it produced.
    if (logger.isLevelEnabled('debug')) {
      const messageOf = decoded.flatMap(({ message, commands: ofMessage }) => ofMessage.map(() => message));
      outcomes.forEach((outcome, index) => {
        if (!isStored(outcome)) return;
        const message = messageOf[index]!;
        const requestId = headerText(message.headers, headers.requestId);
        logger.debug(
          { requestId, partition: batch.partition, offset: message.offset, id: outcome.id, duplicate: outcome.duplicate },
          'command stored',
        );
      });
    }
    await heartbeat();
  }

  const runConfig: ConsumerRunConfig = {
    eachBatchAutoResolve: false,
    // Offsets are committed by the OffsetCommitter's timer, not by kafkajs after every batch.
    autoCommit: false,
    partitionsConsumedConcurrently: options.concurrency,
    eachBatch: (payload) => inFlight.run(() => handleBatch(payload)),
  };

  await producer.connect();
  const consumer = await superviseConsumer({
    name: options.groupId,
    logger,
    create: () => kafka.consumer(consumerConfig(options.groupId, options.settings)),
    run: async (fresh) => {
      fresh.on(fresh.events.GROUP_JOIN, ({ payload }) => {
        completion.reset();
        offsets.assigned(payload.memberAssignment[topic] ?? []);
        options.handler.assigned?.();
      });
      await fresh.connect();
      await fresh.subscribe({ topic, fromBeginning: true });
      await fresh.run(runConfig);
    },
  });

  // Also while idle, so the group's lag (what KEDA scales writers on) falls to zero once work stops.
  const committer = offsets.commitEvery(COMMIT_INTERVAL_MS, () => consumer.current());

  return {
    async stop() {
      clearInterval(committer);
      await consumer.stop(async (current) => {
        // No new batch starts; the one in progress is stored and replied to; then everything stored
        // is committed, so a successor in the group redelivers nothing.
        stopping = true;
        current.pause([{ topic }]);
        await inFlight.idle(STOP_DRAIN_MS);
        await offsets.commitTo(current);
      });
      await producer.disconnect();
    },
  };
}

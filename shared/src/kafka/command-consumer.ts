// The writers' side of the command protocol, shared by trip-writer and group-writer: consume a batch,
// decode it with the shared schema, store the batch in one go, reply to each command, and only then
// resolve the offsets. A crash anywhere before that point means redelivery, which the stores absorb
// idempotently; a message that cannot be decoded, or that the database refuses for its data, goes to
// the dead-letter topic with its reason instead of holding up its partition. The batches of one fetch
// (one per partition, handled concurrently) are stored with one statement and replied to with one
// produce, each reply message carrying many replies.
import type {
  Batch,
  Consumer,
  ConsumerRunConfig,
  EachBatchPayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  Message,
  Producer,
  TopicMessages,
} from 'kafkajs';
import type { z } from 'zod';
import { coalesce } from '../coalesce';
import { delay } from '../deadline';
import { errorCodes } from '../errors';
import type { Logger } from '../logger';
import { REPLIES_PER_MESSAGE, type AddressedReply, type CommandReply } from '../schemas/reply.schema';
import { producerConfig } from './client';
import { superviseConsumer } from './supervised-consumer';
import { headers, type Topics } from './topics';

export interface StoredCommand {
  id: number;
  information: string;
  duplicate: boolean;
}

export interface DecodedCommand<C> {
  command: C;
  message: KafkaMessage;
}

export interface CommandConsumerOptions<S extends z.ZodTypeAny> {
  kafka: Kafka;
  topics: Topics;
  topic: string;
  groupId: string;
  schema: S;
  logger: Logger;
  /** Stores a batch and returns one result per command, in order. Must be idempotent. */
  store: (commands: Array<DecodedCommand<z.output<S>>>) => Promise<StoredCommand[]>;
  /** Partitions processed at once by this instance. */
  concurrency?: number;
  /** How long the broker may hold an empty fetch (KAFKA_FETCH_MAX_WAIT_MS). */
  fetchMaxWaitMs?: number;
  /** How long the group waits for this consumer's heartbeat before rebalancing without it. */
  sessionTimeoutMs?: number;
  /**
   * True when a store failed because of the data of a command (a value the database refuses), which no
   * retry can fix; any other failure is an outage and is retried. Without it every failure is retried.
   */
  isRefusal?: (error: unknown) => boolean;
  metrics?: {
    batch?: (size: number) => void;
    stored?: (inserted: number, duplicates: number) => void;
    deadLettered?: (count: number) => void;
  };
}

export interface CommandConsumer {
  stop(): Promise<void>;
}

function headerText(messageHeaders: IHeaders | undefined, name: string): string | undefined {
  const value = messageHeaders?.[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0]?.toString() : value.toString();
}

/** How often stored offsets are committed. */
const COMMIT_INTERVAL_MS = 1000;
/** How long stop() waits for the batch in progress. */
const STOP_DRAIN_MS = 10_000;

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

/** What storing one command came to: its row, or the reason the database refused it. */
type Outcome = StoredCommand | { refused: string };

const isRefused = (outcome: Outcome): outcome is { refused: string } => 'refused' in outcome;

/** What a batch sends once it is stored: a reply to a gateway, or a message set aside as a dead letter. */
type Outgoing = { replyTopic: string; reply: AddressedReply } | { deadLetter: Message };

/** One message per reply topic (per REPLIES_PER_MESSAGE replies), and the dead letters as they are. */
function outgoingMessages(outgoing: Outgoing[], deadLetterTopic: string): TopicMessages[] {
  const replies = new Map<string, AddressedReply[]>();
  const deadLetters: Message[] = [];
  for (const item of outgoing) {
    if ('deadLetter' in item) {
      deadLetters.push(item.deadLetter);
      continue;
    }
    const list = replies.get(item.replyTopic) ?? [];
    list.push(item.reply);
    replies.set(item.replyTopic, list);
  }
  const topicMessages: TopicMessages[] = [...replies].map(([topic, list]) => {
    const messages: Message[] = [];
    for (let start = 0; start < list.length; start += REPLIES_PER_MESSAGE) {
      messages.push({ value: JSON.stringify(list.slice(start, start + REPLIES_PER_MESSAGE)) });
    }
    return { topic, messages };
  });
  if (deadLetters.length) topicMessages.push({ topic: deadLetterTopic, messages: deadLetters });
  return topicMessages;
}

function decode<S extends z.ZodTypeAny>(
  schema: S,
  message: KafkaMessage,
): { ok: true; command: z.output<S> } | { ok: false; reason: string } {
  if (!message.value) return { ok: false, reason: 'empty message' };
  let json: unknown;
  try {
    json = JSON.parse(message.value.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { ok: false, reason: `invalid command: ${first?.path.join('.') || '(root)'}: ${first?.message}` };
  }
  return { ok: true, command: parsed.data };
}

export async function startCommandConsumer<S extends z.ZodTypeAny>(
  options: CommandConsumerOptions<S>,
): Promise<CommandConsumer> {
  const { kafka, topics, logger } = options;
  const producer: Producer = kafka.producer(producerConfig());
  let failingSince: number | undefined;

  /** Retries a step until it succeeds or this consumer no longer owns the partition. */
  async function persistently<T>(
    what: string,
    step: () => Promise<T>,
    owned: () => boolean,
    heartbeat: () => Promise<void>,
    context: () => Record<string, unknown>,
  ): Promise<T | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const result = await step();
        if (failingSince !== undefined) {
          logger.info({ downForMs: Date.now() - failingSince }, `${what} works again`);
          failingSince = undefined;
        }
        return result;
      } catch (error) {
        if (failingSince === undefined) {
          failingSince = Date.now();
          logger.error({ err: (error as Error).message, ...context() }, `${what} failed; retrying without committing offsets`);
        }
        if (!owned()) return undefined;
        await delay(Math.min(100 * 2 ** attempt, 2000));
        await heartbeat().catch(() => undefined);
        if (!owned()) return undefined;
      }
    }
  }

  /** The batches of one fetch are stored together, and their replies and dead letters sent together. */
  const storeTogether = coalesce(options.store);
  const sendTogether = coalesce(async (outgoing: Outgoing[]) => {
    await producer.sendBatch({ acks: -1, topicMessages: outgoingMessages(outgoing, topics.deadLetter) });
    return outgoing;
  });

  /**
   * Stores a batch. A command the database refuses fails the whole statement, and retrying it would hold
   * up its partitions forever; so once a statement is refused, the batch's commands are stored one by one
   * and only the refused ones are set aside for the dead-letter topic.
   */
  async function storeOrRefuse(commands: Array<DecodedCommand<z.output<S>>>): Promise<Outcome[]> {
    try {
      return await storeTogether(commands);
    } catch (error) {
      if (!options.isRefusal?.(error)) throw error;
    }
    const outcomes: Outcome[] = [];
    for (const command of commands) {
      try {
        outcomes.push(...(await options.store([command])));
      } catch (error) {
        if (!options.isRefusal?.(error)) throw error;
        outcomes.push({ refused: `refused by the database: ${(error as Error).message}` });
      }
    }
    return outcomes;
  }

  /** Per partition, the next offset after the last batch stored and replied to, not yet committed. */
  let uncommitted = new Map<number, string>();
  /** The partitions assigned to this member at its last group join. */
  let assigned = new Set<number>();
  let batchesInFlight = 0;

  const runConfig: ConsumerRunConfig = {
    eachBatchAutoResolve: false,
    // Offsets are committed by a timer every COMMIT_INTERVAL_MS rather than after every batch (what
    // kafkajs's autoCommit does): a commit per batch is a broker round trip in each partition's cycle.
    // A crash redelivers at most that interval's commands, which the stores answer with their rows.
    autoCommit: false,
    partitionsConsumedConcurrently: options.concurrency ?? 2,
    eachBatch: async (payload) => {
      batchesInFlight += 1;
      try {
        await handleBatch(payload);
      } finally {
        batchesInFlight -= 1;
      }
    },
  };

  async function handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload) {
    if (batch.messages.length === 0) return;
    const owned = () => isRunning() && !isStale();
    const context = () => batchContext(batch);
    const decoded: Array<DecodedCommand<z.output<S>>> = [];
    const outgoing: Outgoing[] = [];
    const deadLetter = (message: KafkaMessage, reason: string) => {
      logger.warn(
        {
          requestId: headerText(message.headers, headers.requestId),
          topic: batch.topic,
          partition: batch.partition,
          offset: message.offset,
          reason,
        },
        'dead-lettering a message',
      );
      outgoing.push({
        deadLetter: {
          key: message.key,
          value: message.value,
          headers: {
            ...message.headers,
            [headers.deadLetterReason]: reason,
            [headers.deadLetterSource]: `${batch.topic}/${batch.partition}/${message.offset}`,
          },
        },
      });
    };
    for (const message of batch.messages) {
      const result = decode(options.schema, message);
      if (result.ok) decoded.push({ command: result.command, message });
      else deadLetter(message, result.reason);
    }
    options.metrics?.batch?.(batch.messages.length);

    const outcomes = decoded.length
      ? await persistently('storing to PostgreSQL', () => storeOrRefuse(decoded), owned, heartbeat, context)
      : [];
    if (outcomes === undefined) return;
    const stored = outcomes.filter((outcome): outcome is StoredCommand => !isRefused(outcome));

    outcomes.forEach((result, index) => {
      const { message } = decoded[index]!;
      if (isRefused(result)) deadLetter(message, result.refused);
      const correlationId = headerText(message.headers, headers.correlationId);
      const replyTopic = headerText(message.headers, headers.replyTopic);
      if (!correlationId || !replyTopic) return;
      // The database's own words stay in the dead letter; the client learns that retrying is pointless.
      const reply: CommandReply = isRefused(result)
        ? {
            ok: false,
            code: errorCodes.validationFailed.code,
            message: errorCodes.validationFailed.message,
            detail: 'a value of this request cannot be stored',
          }
        : { ok: true, ...result };
      outgoing.push({ replyTopic, reply: { correlationId, reply } });
    });

    if (outgoing.length) {
      const sent = await persistently('publishing replies', () => sendTogether(outgoing), owned, heartbeat, context);
      if (sent === undefined) return;
    }

    const duplicates = stored.filter((result) => result.duplicate).length;
    options.metrics?.stored?.(stored.length - duplicates, duplicates);
    const deadLettered = outgoing.filter((item) => 'deadLetter' in item).length;
    if (deadLettered) options.metrics?.deadLettered?.(deadLettered);
    resolveOffset(batch.lastOffset());
    uncommitted.set(batch.partition, (BigInt(batch.lastOffset()) + 1n).toString());
    // Per message, so a request id found in the gateway's log leads to the row it produced.
    if (logger.isLevelEnabled('debug')) {
      outcomes.forEach((result, index) => {
        if (isRefused(result)) return;
        const { message } = decoded[index]!;
        logger.debug(
          {
            requestId: headerText(message.headers, headers.requestId),
            partition: batch.partition,
            offset: message.offset,
            id: result.id,
            duplicate: result.duplicate,
          },
          'command stored',
        );
      });
    }
    await heartbeat();
  }

  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  await producer.connect();
  const consumer = await superviseConsumer({
    name: options.groupId,
    logger,
    create: () =>
      kafka.consumer({
        groupId: options.groupId,
        allowAutoTopicCreation: true,
        maxWaitTimeInMs: options.fetchMaxWaitMs ?? 100,
        sessionTimeout,
        // A third of the session at most, so that one lost heartbeat never ends the session.
        heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)),
      }),
    run: async (fresh) => {
      // Offsets of partitions this member no longer owns must not be committed later: they could
      // rewind what their new owner has committed.
      fresh.on(fresh.events.GROUP_JOIN, ({ payload }) => {
        assigned = new Set(payload.memberAssignment[options.topic] ?? []);
        for (const partition of uncommitted.keys()) if (!assigned.has(partition)) uncommitted.delete(partition);
      });
      await fresh.connect();
      await fresh.subscribe({ topic: options.topic, fromBeginning: true });
      await fresh.run(runConfig);
    },
  });

  /** Commits what has been stored since the last commit; what fails is tried again next time. */
  async function commitStored(target: Consumer): Promise<void> {
    if (uncommitted.size === 0) return;
    const taken = [...uncommitted].filter(([partition]) => assigned.has(partition));
    uncommitted = new Map();
    if (taken.length === 0) return;
    try {
      await target.commitOffsets(taken.map(([partition, offset]) => ({ topic: options.topic, partition, offset })));
    } catch (error) {
      for (const [partition, offset] of taken) {
        if (assigned.has(partition) && !uncommitted.has(partition)) uncommitted.set(partition, offset);
      }
      logger.warn({ err: (error as Error).message }, 'could not commit offsets; retrying at the next interval');
    }
  }
  // Also while idle, so the group's lag (what KEDA scales writers on) falls to zero once work stops.
  const committer = setInterval(() => {
    const current = consumer.current();
    if (current) void commitStored(current);
  }, COMMIT_INTERVAL_MS);
  committer.unref();

  return {
    async stop() {
      clearInterval(committer);
      await consumer.stop(async (current) => {
        // No new batch starts; the one in progress is stored and replied to; then everything stored
        // is committed, so a successor in the group redelivers nothing.
        current.pause([{ topic: options.topic }]);
        const deadline = Date.now() + STOP_DRAIN_MS;
        while (batchesInFlight > 0 && Date.now() < deadline) await delay(10);
        await commitStored(current);
      });
      await producer.disconnect();
    },
  };
}

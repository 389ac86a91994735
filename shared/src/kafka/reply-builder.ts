// What a writer sends once a batch is stored: a reply to each message that names a reply topic (a list of
// replies to a list of commands), and the messages it set aside as dead letters, grouped into as few
// messages as possible (one per reply topic and REPLIES_PER_MESSAGE replies).
import type { KafkaMessage, Message, TopicMessages } from 'kafkajs';
import { errorCodes, type ErrorKind } from '../errors';
import { REPLIES_PER_MESSAGE, type AddressedReply, type CommandReply } from '../schemas/reply.schema';
import { headerText } from './message-headers';
import { headers } from './topics';

/**
 * A command set aside as a dead letter: refused for its data (`data`), or failing alone for good in a
 * database that stores others (`store`). `refused` is the reason the dead letter carries.
 */
export interface RefusedCommand {
  refused: string;
  fault: 'data' | 'store';
}

/** What storing one command came to: its reply, or why it was set aside. */
export type StoreOutcome = HandledCommand | RefusedCommand;

/** A command stored (or found stored before): what its client is told. */
export interface StoredCommand {
  id: number;
  information: string;
  /** True when the command had already been stored (a retry or a redelivery). */
  duplicate: boolean;
  /**
   * A duplicate that is this very command delivered again, after the writer that stored it stopped
   * before sending what followed: announced again, since its first announcement may never have gone.
   */
  redelivered?: boolean;
  /** Stored and answered, but not to be announced: a position the writer filtered as unfit to use. */
  silent?: boolean;
}

/**
 * A command the writer answers with the client's error and does not store, by its own rule (a reused
 * Idempotency-Key): the message is sound, so it is answered, not set aside as a dead letter.
 */
export interface RejectedCommand {
  rejected: ErrorKind;
  detail?: string;
}

/** What a writer's handler answers for one command. */
export type HandledCommand = StoredCommand | RejectedCommand;

export const isRefused = (outcome: StoreOutcome): outcome is RefusedCommand => 'refused' in outcome;
export const isRejected = (outcome: StoreOutcome): outcome is RejectedCommand => 'rejected' in outcome;
export const isStored = (outcome: StoreOutcome): outcome is StoredCommand => 'id' in outcome;

/** The database's own words stay in the dead letter; the client learns that retrying is pointless. */
const REFUSED_REPLY: CommandReply = {
  ok: false,
  code: errorCodes.validationFailed.code,
  message: errorCodes.validationFailed.message,
  detail: 'a value of this request cannot be stored',
};

/** Not the client's data: the client learns it failed and was kept for an operator, not that it erred. */
const FAILED_REPLY: CommandReply = {
  ok: false,
  code: errorCodes.internal.code,
  message: errorCodes.internal.message,
  detail: 'this request could not be stored and was set aside for an operator',
};

export function replyFor(outcome: StoreOutcome): CommandReply {
  if (isRefused(outcome)) return outcome.fault === 'data' ? REFUSED_REPLY : FAILED_REPLY;
  if (isRejected(outcome)) {
    const { code, message } = errorCodes[outcome.rejected];
    return { ok: false, code, message, ...(outcome.detail === undefined ? {} : { detail: outcome.detail }) };
  }
  // What the client is told: whether a stored command is announced is the writer's business alone.
  const { id, information, duplicate } = outcome;
  return { ok: true, id, information, duplicate };
}

/**
 * A reply to a gateway (on the partition it asked for, when it named one), or a message set aside as a
 * dead letter.
 */
export type Outgoing =
  | { replyTopic: string; replyPartition?: number; reply: AddressedReply }
  | { deadLetter: Message }
  /** What a writer announces of what it stored (the trip-writer's committed positions), sent with the replies. */
  | { event: { topic: string; message: Message } };

/**
 * The reply to a message: one reply for a command, a list of them for a list of commands; nothing when
 * the message asks for none (no correlation id or reply topic).
 */
export function addressedReply(message: Pick<KafkaMessage, 'headers'>, outcome: StoreOutcome | StoreOutcome[]): Outgoing | undefined {
  const correlationId = headerText(message.headers, headers.correlationId);
  const replyTopic = headerText(message.headers, headers.replyTopic);
  if (!correlationId || !replyTopic) return undefined;
  const partition = Number(headerText(message.headers, headers.replyPartition) ?? Number.NaN);
  return {
    replyTopic,
    ...(Number.isInteger(partition) && partition >= 0 ? { replyPartition: partition } : {}),
    reply: Array.isArray(outcome) ? { correlationId, replies: outcome.map(replyFor) } : { correlationId, reply: replyFor(outcome) },
  };
}

/** The replies an addressed reply holds: what REPLIES_PER_MESSAGE counts. */
const repliesIn = (addressed: AddressedReply) => ('replies' in addressed ? addressed.replies.length : 1);

/** The message as it was, with the reason and its origin (topic/partition/offset) in headers. */
export function deadLetter(message: KafkaMessage, reason: string, source: { topic: string; partition: number }): Outgoing {
  return {
    deadLetter: {
      key: message.key,
      value: message.value,
      headers: {
        ...message.headers,
        [headers.deadLetterReason]: reason,
        [headers.deadLetterSource]: `${source.topic}/${source.partition}/${message.offset}`,
      },
    },
  };
}

/**
 * One message per reply topic and partition (per REPLIES_PER_MESSAGE replies), and the dead letters as
 * they are. A reply whose gateway named no partition goes where the producer puts it.
 */
export function outgoingMessages(outgoing: readonly Outgoing[], deadLetterTopic: string): TopicMessages[] {
  const replies = new Map<string, Map<number | undefined, AddressedReply[]>>();
  const deadLetters: Message[] = [];
  const events = new Map<string, Message[]>();
  for (const item of outgoing) {
    if ('deadLetter' in item) {
      deadLetters.push(item.deadLetter);
      continue;
    }
    if ('event' in item) {
      let messages = events.get(item.event.topic);
      if (!messages) events.set(item.event.topic, (messages = []));
      messages.push(item.event.message);
      continue;
    }
    const byPartition = replies.get(item.replyTopic) ?? new Map<number | undefined, AddressedReply[]>();
    replies.set(item.replyTopic, byPartition);
    const list = byPartition.get(item.replyPartition) ?? [];
    list.push(item.reply);
    byPartition.set(item.replyPartition, list);
  }
  const topicMessages: TopicMessages[] = [...replies].map(([topic, byPartition]) => {
    const messages: Message[] = [];
    for (const [partition, list] of byPartition) {
      const message = (chunk: AddressedReply[]): Message =>
        partition === undefined ? { value: JSON.stringify(chunk) } : { partition, value: JSON.stringify(chunk) };
      let chunk: AddressedReply[] = [];
      let counted = 0;
      for (const addressed of list) {
        const count = repliesIn(addressed);
        if (chunk.length > 0 && counted + count > REPLIES_PER_MESSAGE) {
          messages.push(message(chunk));
          chunk = [];
          counted = 0;
        }
        chunk.push(addressed);
        counted += count;
      }
      if (chunk.length > 0) messages.push(message(chunk));
    }
    return { topic, messages };
  });
  if (deadLetters.length) topicMessages.push({ topic: deadLetterTopic, messages: deadLetters });
  for (const [topic, messages] of events) topicMessages.push({ topic, messages });
  return topicMessages;
}

// What a produce may carry: the size cap one produce keeps under the broker's limit, a message's weight
// in it, and the split of many messages into produces under that cap. The gateway's publisher and the
// writers' reply flush both size their produces with it.
import type { Message, TopicMessages } from 'kafkajs';

/**
 * Bytes one produce carries at most. The broker takes a partition's messages in one produce as one
 * batch and refuses it past its message.max.bytes (1 MiB by default), and a flush after a backlog (a
 * fetch of up to 1 MiB a partition) can owe one partition more replies and announcements than that.
 */
export const PRODUCE_BYTES = 768 * 1024;

const RECORD_FRAMING_BYTES = 64;
const bytesOf = (data: string | Buffer | null | undefined) =>
  data == null ? 0 : typeof data === 'string' ? Buffer.byteLength(data) : data.length;

/** What a message weighs in a produce: its key, value and headers, and a record's framing. */
export function messageBytes(message: Message): number {
  let bytes = RECORD_FRAMING_BYTES + bytesOf(message.key) + bytesOf(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    bytes += Buffer.byteLength(name);
    for (const part of Array.isArray(value) ? value : [value]) bytes += bytesOf(part);
  }
  return bytes;
}

/**
 * The produces that send `topicMessages` without one passing `maxBytes` (a message heavier alone is a
 * produce of its own), in order: sent one after the other, every partition's messages keep their order.
 */
export function produceRounds(topicMessages: readonly TopicMessages[], maxBytes = PRODUCE_BYTES): TopicMessages[][] {
  const rounds: TopicMessages[][] = [];
  let round = new Map<string, Message[]>();
  let bytes = 0;
  const close = () => rounds.push([...round].map(([topic, messages]) => ({ topic, messages })));
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const weight = messageBytes(message);
      if (bytes > 0 && bytes + weight > maxBytes) {
        close();
        round = new Map();
        bytes = 0;
      }
      let ofTopic = round.get(topic);
      if (!ofTopic) round.set(topic, (ofTopic = []));
      ofTopic.push(message);
      bytes += weight;
    }
  }
  if (bytes > 0) close();
  return rounds;
}

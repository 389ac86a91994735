// Turns the messages of a batch into commands with the wire schema of their topic. A message carries one
// command, or a JSON array of commands of one key (a device's positions uploaded together), which are
// stored and answered as one message's. A message that is not that (empty, not JSON, an empty list, any
// command failing the schema) is set aside whole with its reason, to be dead-lettered instead of holding
// up its partition.
import type { KafkaMessage } from 'kafkajs';
import type { z } from 'zod';

export interface DecodedMessage<C> {
  /** The message's commands, in the order they were published. */
  commands: C[];
  /** True when the message is a list of commands, answered with a list of replies. */
  list: boolean;
  message: KafkaMessage;
}

export interface UndecodableMessage {
  message: KafkaMessage;
  reason: string;
}

export interface DecodedBatch<C> {
  decoded: Array<DecodedMessage<C>>;
  undecodable: UndecodableMessage[];
}

export function decodeMessage<S extends z.ZodType>(
  schema: S,
  message: Pick<KafkaMessage, 'value'>,
): { ok: true; commands: Array<z.output<S>>; list: boolean } | { ok: false; reason: string } {
  if (!message.value) return { ok: false, reason: 'empty message' };
  let json: unknown;
  try {
    json = JSON.parse(message.value.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const list = Array.isArray(json);
  const values: unknown[] = Array.isArray(json) ? json : [json];
  if (values.length === 0) return { ok: false, reason: 'invalid command: (root): a list of commands holds at least one' };
  const commands: Array<z.output<S>> = [];
  for (const [index, value] of values.entries()) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const path = [...(list ? [index] : []), ...(first?.path ?? [])].join('.');
      return { ok: false, reason: `invalid command: ${path || '(root)'}: ${first?.message}` };
    }
    commands.push(parsed.data);
  }
  return { ok: true, commands, list };
}

export function decodeBatch<S extends z.ZodType>(schema: S, messages: readonly KafkaMessage[]): DecodedBatch<z.output<S>> {
  const batch: DecodedBatch<z.output<S>> = { decoded: [], undecodable: [] };
  for (const message of messages) {
    const result = decodeMessage(schema, message);
    if (result.ok) batch.decoded.push({ commands: result.commands, list: result.list, message });
    else batch.undecodable.push({ message, reason: result.reason });
  }
  return batch;
}

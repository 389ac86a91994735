// Turns the messages of a batch into commands with the wire schema of their topic. A message that is
// not a command (empty, not JSON, failing the schema) is set aside with its reason, to be dead-lettered
// instead of holding up its partition.
import type { KafkaMessage } from 'kafkajs';
import type { z } from 'zod';

export interface DecodedCommand<C> {
  command: C;
  message: KafkaMessage;
}

export interface UndecodableMessage {
  message: KafkaMessage;
  reason: string;
}

export interface DecodedBatch<C> {
  decoded: Array<DecodedCommand<C>>;
  undecodable: UndecodableMessage[];
}

export function decodeMessage<S extends z.ZodTypeAny>(
  schema: S,
  message: Pick<KafkaMessage, 'value'>,
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

export function decodeBatch<S extends z.ZodTypeAny>(schema: S, messages: readonly KafkaMessage[]): DecodedBatch<z.output<S>> {
  const batch: DecodedBatch<z.output<S>> = { decoded: [], undecodable: [] };
  for (const message of messages) {
    const result = decodeMessage(schema, message);
    if (result.ok) batch.decoded.push({ command: result.command, message });
    else batch.undecodable.push({ message, reason: result.reason });
  }
  return batch;
}

// What a command message is as bytes, and what the requests of a produce that failed are answered:
// the command bus's pure half, apart from its state.
import { AppError } from '@fleet/shared/errors';
import { LeaderStillBusy, PublishTimedOut } from './batching-publisher';

/**
 * The most one command message may weigh as JSON. A produce of it, with its headers, stays under
 * PRODUCE_BYTES and so under the broker's 1 MB limit, and so do the writer's announcements of what it
 * holds. A list heavier than this is published as several messages; a single command heavier is refused.
 */
export const MAX_COMMAND_BYTES = 512 * 1024;

/** A message's JSON, ready to publish, and the commands it carries. */
export interface Encoded {
  value: string;
  commands: number;
}

export function tooLarge(bytes: number): AppError {
  return new AppError({
    kind: 'payloadTooLarge',
    detail: `one position or group is ${bytes} bytes once normalised, over the ${MAX_COMMAND_BYTES} a message may carry; it can never be stored, so do not retry it`,
  });
}

/**
 * JSON of a command (or list), refused before anything waits for a reply: a value that cannot be
 * serialised is a fault of this gateway (validation should have refused it), never a reason to exit.
 */
export function encode(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new AppError({ kind: 'internal', cause: error });
  }
}

/** A list of commands as messages under MAX_COMMAND_BYTES each, halved until each fits, in order. */
export function encodeList(values: readonly unknown[]): Encoded[] {
  const value = encode(values);
  const bytes = Buffer.byteLength(value);
  if (bytes <= MAX_COMMAND_BYTES) return [{ value, commands: values.length }];
  if (values.length === 1) throw tooLarge(bytes);
  const half = Math.ceil(values.length / 2);
  return [...encodeList(values.slice(0, half)), ...encodeList(values.slice(half))];
}

/** Whether the broker refused a produce for its size: the commands can never fit, Kafka is not down. */
export function refusedForSize(error: unknown): boolean {
  for (
    let cause = error as { type?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
    cause;
    cause = cause.cause as typeof cause
  ) {
    if (cause.type === 'MESSAGE_TOO_LARGE' || cause.type === 'RECORD_LIST_TOO_LARGE') return true;
    if (Array.isArray(cause.errors) && cause.errors.some(refusedForSize)) return true;
  }
  return false;
}

/** What the requests of a batch that was not confirmed are answered: each says whether a retry is safe. */
export function publishFailure(error: unknown, publishTimeoutMs: number): AppError {
  if (error instanceof LeaderStillBusy) {
    return new AppError({
      kind: 'busy',
      detail: "Kafka has not yet confirmed this gateway's last write to the same broker, so nothing of this request was sent",
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  if (error instanceof PublishTimedOut) {
    // Sent and not confirmed: it may still be stored, which the writers make safe to retry.
    return new AppError({
      kind: 'replyTimeout',
      detail: `Kafka did not confirm the write within ${publishTimeoutMs} ms, so it may or may not have been stored; a retry with the same body (and Idempotency-Key) is stored once`,
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  // A produce that failed may still have reached the broker and been stored.
  return new AppError({
    kind: 'brokerUnavailable',
    message: 'The message broker did not confirm the write, so it may or may not have been stored; retrying is safe',
    detail: 'publishing to Kafka failed; a retry with the same body (and Idempotency-Key) is stored once',
    retryAfterSeconds: 1,
    cause: error,
  });
}

// Use case: a device or an aggregator uploads the positions it buffered while out of coverage. Each
// position is the command a single post makes (same schema, same topic, placed by IMEI, stored
// idempotently by the trip-writer); the positions bound for one partition travel together as one
// message, a list of commands in the order they were sent. That message is where a batch saves its cost:
// one record, one correlation id and one reply for a partition's share of the batch, whether it holds
// one device's hundred positions or an aggregator's hundred devices. Each device's positions land on the
// partition its single posts land on, so its order holds. A token restricted to one device has the
// whole batch refused when any position names another device: nothing is stored.
import { z } from 'zod';
import { AppError } from '@fleet/shared/errors';
import { maxLength, minLength } from '@fleet/shared/schemas/checks';
import { typeError } from '@fleet/shared/schemas/issue-wording';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import { requireOwnDevice } from '../auth/device-claim';
import { validationError } from '@fleet/shared/schemas/validation-error';
import type { TripWriteDeps } from './create-trip-location';

export const MAX_BATCH_POSITIONS = 1000;

export type BatchItem = { index: number; id: number } | { index: number; error: Record<string, unknown> };

export interface BatchResult {
  message: string;
  data: { accepted: number; rejected: number; items: BatchItem[] };
}

const batchSchema = z
  .array(z.unknown(), { error: typeError('Expected an array of trip locations') })
  .check(
    minLength(1, 'Must hold at least 1 position'),
    maxLength(MAX_BATCH_POSITIONS, `Must hold at most ${MAX_BATCH_POSITIONS} positions`),
  );

/**
 * A writer's answer about one position belongs to that item: a refusal, or a position it set aside
 * because it failed alone for good. An outage (unavailable) does not, because the client could not tell
 * which positions were stored, so it fails the whole batch (a retry is safe).
 */
function itemOf(index: number, reply: CommandReply): BatchItem {
  if (reply.ok) return { index, id: reply.id };
  const error = AppError.fromCode(reply.code, reply.detail);
  if (error.category === 'unavailable') throw error;
  return { index, error: error.toJSON() };
}

/** One message of the batch: the positions of one partition (or, before the layout is known, one device). */
interface Message {
  partition: number | undefined;
  /** The first device's IMEI. */
  key: string;
  imeis: Set<string>;
  indexes: number[];
  commands: TripLocationCommand[];
}

/** `device`: the only device the token may write positions of, or undefined when it is not restricted. */
export async function recordTripBatch(
  body: unknown,
  device: string | undefined,
  requestId: string,
  deps: TripWriteDeps,
): Promise<BatchResult> {
  const batch = batchSchema.safeParse(body);
  if (!batch.success) throw validationError(batch.error);
  // Every position is checked before any is published, so a refused batch stores nothing.
  requireOwnDevice(device, batch.data, true);
  const receivedAt = new Date().toISOString();

  const items: BatchItem[] = [];
  const perDevice = new Map<string, number>();
  /** The valid positions bound for each partition, in request order, with their indexes in the batch. */
  const messages = new Map<number | string, Message>();
  batch.data.forEach((position, index) => {
    const parsed = deps.tripRequest.safeParse(position);
    if (!parsed.success) {
      items.push({ index, error: validationError(parsed.error).toJSON() });
      return;
    }
    const command: TripLocationCommand = { ...parsed.data, receivedAt };
    perDevice.set(command.imei, (perDevice.get(command.imei) ?? 0) + 1);
    // Before the topic's layout is known, a device's positions still travel together, keyed by it.
    const partition = deps.bus.partitionOf(deps.topic, command.imei);
    const place = partition ?? command.imei;
    let message = messages.get(place);
    if (!message) messages.set(place, (message = { partition, key: command.imei, imeis: new Set(), indexes: [], commands: [] }));
    message.imeis.add(command.imei);
    message.indexes.push(index);
    message.commands.push(command);
  });

  // Only valid positions count against their device, and a refusal refuses the whole batch.
  await deps.admit(perDevice);
  if (messages.size > 0) {
    const lists = [...messages.values()];
    const replies = await deps.bus.requestLists(
      lists.map(({ partition, key, imeis, commands }) => ({
        topic: deps.topic,
        // A message of one device keeps its key; one of several names its partition alone.
        ...(imeis.size === 1 || partition === undefined ? { key } : { key: null, partition }),
        values: commands,
        headers: { 'request-id': requestId },
      })),
    );
    lists.forEach((list, at) => list.indexes.forEach((index, position) => items.push(itemOf(index, replies[at]![position]!))));
    items.sort((a, b) => a.index - b.index);
  }

  const rejected = items.filter((item) => 'error' in item).length;
  return {
    message: 'Trip locations have been processed',
    data: { accepted: items.length - rejected, rejected, items },
  };
}

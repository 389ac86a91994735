// Use case: a device or an aggregator uploads the positions it buffered while out of coverage. Each
// position travels exactly as a single post does (same schema, same topic, keyed by IMEI, stored
// idempotently by the trip-writer), so a batch adds no second way of storing a trip; the command bus
// gathers the commands into few produces, which is where a batch saves its cost. A token restricted to
// one device has the whole batch refused when any position names another device: nothing is stored.
import { z } from 'zod';
import { AppError, type CommandReply, type CommandRequest, type TripLocationCommand } from '@fleet/shared';
import { requireOwnDevice } from '../auth/device-claim';
import { validationError } from '../validation-error';
import type { TripWriteDeps } from './create-trip-location';

export const MAX_BATCH_POSITIONS = 1000;

export type BatchItem = { index: number; id: number } | { index: number; error: Record<string, unknown> };

export interface BatchResult {
  message: string;
  data: { accepted: number; rejected: number; items: BatchItem[] };
}

const batchSchema = z
  .array(z.unknown(), { invalid_type_error: 'Expected an array of trip locations' })
  .min(1, 'Must hold at least 1 position')
  .max(MAX_BATCH_POSITIONS, `Must hold at most ${MAX_BATCH_POSITIONS} positions`);

/**
 * A writer's refusal of one position belongs to that item; an outage does not, because the client
 * could not tell which positions were stored, so it fails the whole batch (a retry is safe).
 */
function itemOf(index: number, reply: CommandReply): BatchItem {
  if (reply.ok) return { index, id: reply.id };
  const error = AppError.fromCode(reply.code, reply.detail);
  if (error.httpStatus >= 500) throw error;
  return { index, error: error.toJSON() };
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
  const commands: { index: number; request: CommandRequest }[] = [];
  const positionsByDevice = new Map<string, number>();
  batch.data.forEach((position, index) => {
    const parsed = deps.tripRequest.safeParse(position);
    if (!parsed.success) {
      items.push({ index, error: validationError(parsed.error).toJSON() });
      return;
    }
    const command: TripLocationCommand = { ...parsed.data, receivedAt };
    commands.push({ index, request: { topic: deps.topic, key: command.imei, value: command, headers: { 'request-id': requestId } } });
    positionsByDevice.set(command.imei, (positionsByDevice.get(command.imei) ?? 0) + 1);
  });

  // Only valid positions count against their device, and a refusal refuses the whole batch.
  await deps.admit(positionsByDevice);
  if (commands.length > 0) {
    // Published in request order, so a device's positions reach its partition in the order it sent them.
    const replies = await deps.bus.requestAll(commands.map(({ request }) => request));
    commands.forEach(({ index }, at) => items.push(itemOf(index, replies[at]!)));
    items.sort((a, b) => a.index - b.index);
  }

  const rejected = items.filter((item) => 'error' in item).length;
  return {
    message: 'Trip locations have been processed',
    data: { accepted: items.length - rejected, rejected, items },
  };
}

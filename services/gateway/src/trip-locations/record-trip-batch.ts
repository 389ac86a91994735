// Use case: a device or an aggregator uploads the positions it buffered while out of coverage. Each
// position is the command a single post makes (same schema, same topic, keyed by IMEI, stored
// idempotently by the trip-writer); a device's positions travel together as one message, a list of
// commands, in the order it sent them. That message is where a batch saves its cost: one record, one
// correlation id and one reply for a device's hundred positions instead of a hundred of each. A token
// restricted to one device has the whole batch refused when any position names another device: nothing
// is stored.
import { z } from 'zod';
import { AppError, maxLength, minLength, typeError, type CommandReply, type TripLocationCommand } from '@fleet/shared';
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
  /** Each device's valid positions, in request order, with their indexes in the batch. */
  const byDevice = new Map<string, { indexes: number[]; commands: TripLocationCommand[] }>();
  batch.data.forEach((position, index) => {
    const parsed = deps.tripRequest.safeParse(position);
    if (!parsed.success) {
      items.push({ index, error: validationError(parsed.error).toJSON() });
      return;
    }
    const command: TripLocationCommand = { ...parsed.data, receivedAt };
    let device = byDevice.get(command.imei);
    if (!device) byDevice.set(command.imei, (device = { indexes: [], commands: [] }));
    device.indexes.push(index);
    device.commands.push(command);
  });

  // Only valid positions count against their device, and a refusal refuses the whole batch.
  await deps.admit(new Map(Array.from(byDevice, ([imei, device]) => [imei, device.commands.length])));
  if (byDevice.size > 0) {
    const devices = [...byDevice];
    const replies = await deps.bus.requestLists(
      devices.map(([imei, device]) => ({ topic: deps.topic, key: imei, values: device.commands, headers: { 'request-id': requestId } })),
    );
    devices.forEach(([, device], at) => device.indexes.forEach((index, position) => items.push(itemOf(index, replies[at]![position]!))));
    items.sort((a, b) => a.index - b.index);
  }

  const rejected = items.filter((item) => 'error' in item).length;
  return {
    message: 'Trip locations have been processed',
    data: { accepted: items.length - rejected, rejected, items },
  };
}

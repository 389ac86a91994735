// Use case: a device reports a position. Validated here, stored by the trip-writer, answered once the
// row is committed. Keyed by IMEI so each device's positions stay in order on one partition. A token
// restricted to one device writes only that device's positions.
import { AppError } from '@fleet/shared/errors';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';
import type { CommandListRequest, CommandRequest } from '@fleet/write-path/kafka/command-request';
import { requireOwnDevice } from '../auth/device-claim';
import { validationError } from '@fleet/shared/schemas/validation-error';
import type { TripRequestSchema } from '@fleet/write-path/trip-request';

export interface CreationResult {
  message: string;
  data: { id: number; information: string };
}

/** Where the writes are sent to their writers, and their outcomes come back from (the write path's CommandBus). */
export interface CommandSender {
  /** Publishes a command and resolves with its writer's reply; rejects with a retry-safe 503 AppError. */
  request(command: CommandRequest): Promise<CommandReply>;
  /** Publishes lists of commands, each as one message, and resolves with each list's replies. */
  requestLists(lists: readonly CommandListRequest[]): Promise<CommandReply[][]>;
  /** The partition of `topic` a message keyed `key` lands on; undefined while unknown. */
  partitionOf(topic: string, key: string): number | undefined;
}

export interface WriteDeps {
  bus: CommandSender;
  topic: string;
  /**
   * Resolves when a request carrying these positions per device may be published; rejects with the
   * refusal (a 429) otherwise. Called after validation and before anything is published.
   */
  admit(positionsByDevice: ReadonlyMap<string, number>): Promise<void>;
}

export interface TripWriteDeps extends WriteDeps {
  /** The request schema with the gateway's MAX_FUTURE_SKEW (trip-request.ts). */
  tripRequest: TripRequestSchema;
}

export function toCreationResult(reply: CommandReply, message: string): CreationResult {
  if (!reply.ok) throw AppError.fromCode(reply.code, reply.detail);
  return { message, data: { id: reply.id, information: reply.information } };
}

/** `device`: the only device the token may write positions of, or undefined when it is not restricted. */
export async function createTripLocation(
  body: unknown,
  device: string | undefined,
  requestId: string,
  deps: TripWriteDeps,
): Promise<CreationResult> {
  requireOwnDevice(device, [body], false);
  const parsed = deps.tripRequest.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  await deps.admit(new Map([[parsed.data.imei, 1]]));
  const command: TripLocationCommand = { ...parsed.data, receivedAt: new Date().toISOString() };
  const reply = await deps.bus.request({
    topic: deps.topic,
    key: command.imei,
    value: command,
    headers: { 'request-id': requestId },
  });
  return toCreationResult(reply, 'Trip location has been recorded');
}

// Use case: a fleet app creates a vehicle group. Every create has a key (the client's Idempotency-Key,
// or one generated here) that lets the group-writer turn redeliveries and client retries into the same
// group. A key belongs to the token's subject: the command id is derived from both. A 503 does not say whether the group was stored (the writer may store it once its database is
// back), so it hands the key to the client: a retry with it cannot create the group twice.
import { randomUUID } from 'node:crypto';
import { AppError } from '@fleet/shared/errors';
import { commandIdFor, vehicleGroupRequestSchema, type VehicleGroupCommand } from '@fleet/shared/schemas/vehicle-group.schema';
import { validationError } from '@fleet/shared/schemas/validation-error';
import { NO_DEVICES } from '@fleet/write-path/rate-limits/write-limits';
import { toCreationResult, type CreationResult, type WriteDeps } from '../trip-locations/create-trip-location';

const RETRY_WITH_KEY_MESSAGE =
  'The vehicle group was not confirmed; retry with the Idempotency-Key header of this response to create it exactly once';

export interface GroupCreator {
  /** The token's subject (VerifiedToken.subject), which owns the key. */
  subject: string;
  /** The client's Idempotency-Key, if it sent one. */
  key: string | undefined;
}

export async function createVehicleGroup(
  body: unknown,
  creator: GroupCreator,
  requestId: string,
  deps: WriteDeps,
): Promise<CreationResult> {
  const parsed = vehicleGroupRequestSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  await deps.admit(NO_DEVICES);
  const key = creator.key ?? randomUUID();
  const command: VehicleGroupCommand = { commandId: commandIdFor(creator.subject, key), ...parsed.data };
  try {
    const reply = await deps.bus.request({
      topic: deps.topic,
      key: command.vehicleGroupName,
      value: command,
      headers: { 'request-id': requestId },
    });
    return toCreationResult(reply, 'Vehicle group has been created');
  } catch (error) {
    throw error instanceof AppError && error.category === 'unavailable' ? retryWithKey(error, key) : error;
  }
}

function retryWithKey(error: AppError, key: string): AppError {
  return new AppError({
    kind: error.kind,
    message: RETRY_WITH_KEY_MESSAGE,
    detail: error.detail,
    retryAfterSeconds: error.retryAfterSeconds ?? 1,
    fields: { idempotencyKey: key },
    cause: error,
  });
}

// Use case: a fleet app creates a vehicle group. The command id (the client's Idempotency-Key, or one
// generated here) lets the group-writer turn redeliveries and client retries into the same group.
import { randomUUID } from 'node:crypto';
import { vehicleGroupRequestSchema, type VehicleGroupCommand } from '@fleet/shared';
import { validationError } from '../http/validation';
import { toCreationResult, type CreationResult, type WriteDeps } from '../trip-locations/create-trip-location';

export async function createVehicleGroup(
  body: unknown,
  idempotencyKey: string | undefined,
  requestId: string,
  deps: WriteDeps,
): Promise<CreationResult> {
  const parsed = vehicleGroupRequestSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  const command: VehicleGroupCommand = {
    commandId: idempotencyKey ? `key:${idempotencyKey}` : `gen:${randomUUID()}`,
    ...parsed.data,
  };
  const reply = await deps.bus.request({
    topic: deps.topic,
    key: command.vehicleGroupName,
    value: command,
    headers: { 'request-id': requestId },
  });
  return toCreationResult(reply, 'Vehicle group has been created');
}

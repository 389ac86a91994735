// The group-writer's Kafka batch handler: vehicle-group commands, decoded with their wire schema, stored
// by group-store, and answered with the group's id and the sentence the client reads in `information`,
// or, for an Idempotency-Key already used for another group, with the error the client gets as a 422.
import type { Pool } from 'pg';
import type { CommandHandler } from '@fleet/shared/kafka/command-consumer';
import { vehicleGroupCommandSchema } from '@fleet/shared/schemas/vehicle-group.schema';
import { storeVehicleGroups, type KeyMemory, type VehicleGroupRow } from './group-store';

export function groupInformation(group: Pick<VehicleGroupRow, 'name'>): string {
  return `Vehicle group "${group.name}" has been created`;
}

export function keyReusedDetail(memory: KeyMemory): string {
  return (
    `Idempotency-Key: this key created a group from another name or other vehicle ids within the last ${memory.ttlHours} hours; ` +
    'send a new key to create another group'
  );
}

export function consumeVehicleGroups(pool: Pool, memory: KeyMemory): CommandHandler<typeof vehicleGroupCommandSchema> {
  return {
    schema: vehicleGroupCommandSchema,
    async store(commands) {
      const groups = await storeVehicleGroups(pool, commands, memory);
      return groups.map(({ id, duplicate, keyReused, ...group }) =>
        keyReused
          ? { rejected: 'idempotencyKeyReused' as const, detail: keyReusedDetail(memory) }
          : { id, duplicate, information: groupInformation(group) },
      );
    },
  };
}

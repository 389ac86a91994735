// The group-writer's Kafka batch handler: vehicle-group commands, decoded with their wire schema, stored
// by group-store, and answered with the group's id and the sentence the client reads in `information`.
import type { Pool } from 'pg';
import { vehicleGroupCommandSchema, type CommandHandler } from '@fleet/shared';
import { storeVehicleGroups, type VehicleGroupRow } from './group-store';

export function groupInformation(group: Pick<VehicleGroupRow, 'name'>): string {
  return `Vehicle group "${group.name}" has been created`;
}

export function consumeVehicleGroups(pool: Pool): CommandHandler<typeof vehicleGroupCommandSchema> {
  return {
    schema: vehicleGroupCommandSchema,
    async store(commands) {
      const groups = await storeVehicleGroups(pool, commands);
      return groups.map(({ id, duplicate, ...group }) => ({ id, duplicate, information: groupInformation(group) }));
    },
  };
}

// SQL for vehicle groups. A batch of commands becomes one transaction: the groups with one INSERT, their
// members with another. A command id seen before (a redelivery or a client retry) returns the group it
// created and adds nothing.
import type { Pool } from 'pg';
import type { VehicleGroupCommand } from '@fleet/shared';

/** The group a vehicle group command came to. */
export interface VehicleGroupRow {
  id: number;
  name: string;
  /** True when the command had created the group before (a retry or a redelivery). */
  duplicate: boolean;
}

const INSERT_GROUPS = `
  INSERT INTO vehicle_groups (name, command_id)
  SELECT * FROM unnest($1::text[], $2::text[])
  ON CONFLICT (command_id) DO NOTHING
  RETURNING id, command_id`;

const SELECT_GROUPS = `SELECT id, name, command_id FROM vehicle_groups WHERE command_id = ANY($1::text[])`;

const INSERT_MEMBERS = `
  INSERT INTO vehicle_group_members (vehicle_group_id, vehicle_id)
  SELECT * FROM unnest($1::bigint[], $2::bigint[])
  ON CONFLICT DO NOTHING`;

/** Stores the groups with their members and answers one group per command, in order. */
export async function storeVehicleGroups(pool: Pool, commands: VehicleGroupCommand[]): Promise<VehicleGroupRow[]> {
  const client = await pool.connect();
  // The pool stops listening to a client it has handed out: a connection the server ends between two
  // statements of the transaction would emit an error nobody hears, and crash the writer. The statement
  // that follows fails instead, and the batch is retried.
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const inserted = await client.query<{ id: string; command_id: string }>(INSERT_GROUPS, [
      commands.map((c) => c.vehicleGroupName),
      commands.map((c) => c.commandId),
    ]);
    const fresh = new Map(inserted.rows.map((row) => [row.command_id, row.id]));

    const groupIds: string[] = [];
    const vehicleIds: number[] = [];
    const membersAdded = new Set<string>();
    for (const command of commands) {
      const groupId = fresh.get(command.commandId);
      if (groupId === undefined || membersAdded.has(command.commandId)) continue;
      membersAdded.add(command.commandId);
      for (const vehicleId of command.vehicleIds) {
        groupIds.push(groupId);
        vehicleIds.push(vehicleId);
      }
    }
    if (groupIds.length) await client.query(INSERT_MEMBERS, [groupIds, vehicleIds]);

    const groups = await client.query<{ id: string; name: string; command_id: string }>(SELECT_GROUPS, [commands.map((c) => c.commandId)]);
    await client.query('COMMIT');

    const byCommand = new Map(groups.rows.map((row) => [row.command_id, row]));
    const claimed = new Set<string>();
    return commands.map((command) => {
      const group = byCommand.get(command.commandId);
      if (!group) throw new Error(`vehicle group for command ${command.commandId} was neither inserted nor found`);
      const duplicate = !fresh.has(command.commandId) || claimed.has(command.commandId);
      claimed.add(command.commandId);
      return { id: Number(group.id), name: group.name, duplicate };
    });
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    lost ??= error as Error;
    throw error;
  } finally {
    client.removeListener('error', onLost);
    // A client whose statement failed may have lost its connection: it is closed, not reused.
    client.release(lost);
  }
}

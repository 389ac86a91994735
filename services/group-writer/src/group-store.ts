// SQL for vehicle groups. A batch of commands becomes one transaction: the groups with one INSERT, their
// members with another. A command id seen before (a redelivery or a client retry) returns the group it
// created and adds nothing, as long as its key is remembered (KeyMemory.ttlHours) and the command asks
// for the same group; a key reused for another group creates nothing. A batch's statements are named, so
// each connection plans them once rather than once a batch.
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { inTransaction } from '@fleet/shared/db/transaction';
import type { VehicleGroupCommand } from '@fleet/shared/schemas/vehicle-group.schema';

/** The group a vehicle group command came to. */
export interface VehicleGroupRow {
  id: number;
  name: string;
  /** True when the command had created the group before (a retry or a redelivery). */
  duplicate: boolean;
  /**
   * True when the command's key had created this group from another request (another name or other
   * vehicle ids): nothing was stored for the command.
   */
  keyReused: boolean;
}

/** How long a command id (the Idempotency-Key it was derived from) is remembered. */
export interface KeyMemory {
  ttlHours: number;
}

/**
 * What makes two creates the same request: the group they would store. The name is already trimmed and
 * the ids are a set, so [2, 1] and [1, 2, 2] ask for the same group.
 */
export function requestFingerprint(command: Pick<VehicleGroupCommand, 'vehicleGroupName' | 'vehicleIds'>): Buffer {
  const ids = [...new Set(command.vehicleIds)].sort((a, b) => a - b);
  return createHash('sha256')
    .update(JSON.stringify([command.vehicleGroupName, ids]))
    .digest();
}

// In the batch's own transaction, so that a key past its lifetime is never answered with its old group,
// whether or not the periodic purge has run.
const FORGET_EXPIRED_OF_BATCH = `
  UPDATE vehicle_groups SET command_id = NULL, request_fingerprint = NULL
  WHERE command_id = ANY($1::text[]) AND created_at < now() - make_interval(hours => $2)`;

const FORGET_EXPIRED = `
  UPDATE vehicle_groups SET command_id = NULL, request_fingerprint = NULL
  WHERE id IN (
    SELECT id FROM vehicle_groups
    WHERE command_id IS NOT NULL AND created_at < now() - make_interval(hours => $1)
    LIMIT $2)`;

/** Rows cleared per statement, so that the purge never holds many row locks at once. */
const PURGE_CHUNK = 1000;

const INSERT_GROUPS = `
  INSERT INTO vehicle_groups (name, command_id, request_fingerprint)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])
  ON CONFLICT (command_id) DO NOTHING
  RETURNING id, command_id`;

const SELECT_GROUPS = `SELECT id, name, command_id, request_fingerprint FROM vehicle_groups WHERE command_id = ANY($1::text[])`;

const INSERT_MEMBERS = `
  INSERT INTO vehicle_group_members (vehicle_group_id, vehicle_id)
  SELECT * FROM unnest($1::bigint[], $2::bigint[])
  ON CONFLICT DO NOTHING`;

/** Clears the keys older than their lifetime, all of them; answers how many were forgotten. */
export async function forgetExpiredKeys(pool: Pool, memory: KeyMemory): Promise<number> {
  let forgotten = 0;
  for (;;) {
    const cleared = (await pool.query(FORGET_EXPIRED, [memory.ttlHours, PURGE_CHUNK])).rowCount ?? 0;
    forgotten += cleared;
    if (cleared < PURGE_CHUNK) return forgotten;
  }
}

/** Stores the groups with their members and answers one group per command, in order. */
export async function storeVehicleGroups(pool: Pool, commands: VehicleGroupCommand[], memory: KeyMemory): Promise<VehicleGroupRow[]> {
  const fingerprints = commands.map(requestFingerprint);
  return inTransaction(pool, async (client) => {
    // The lookups by a list of command ids are unnamed, the inserts named: a named statement's generic
    // plan, made while vehicle_groups was nearly empty, is a sequential scan kept as the table grows.
    await client.query(FORGET_EXPIRED_OF_BATCH, [commands.map((c) => c.commandId), memory.ttlHours]);
    const inserted = await client.query<{ id: string; command_id: string }>({
      name: 'groups-insert',
      text: INSERT_GROUPS,
      values: [commands.map((c) => c.vehicleGroupName), commands.map((c) => c.commandId), fingerprints],
    });
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
    if (groupIds.length) await client.query({ name: 'groups-insert-members', text: INSERT_MEMBERS, values: [groupIds, vehicleIds] });

    const groups = await client.query<{ id: string; name: string; command_id: string; request_fingerprint: Buffer | null }>(SELECT_GROUPS, [
      commands.map((c) => c.commandId),
    ]);

    const byCommand = new Map(groups.rows.map((row) => [row.command_id, row]));
    const claimed = new Set<string>();
    return commands.map((command, index) => {
      const group = byCommand.get(command.commandId);
      if (!group) throw new Error(`vehicle group for command ${command.commandId} was neither inserted nor found`);
      const duplicate = !fresh.has(command.commandId) || claimed.has(command.commandId);
      claimed.add(command.commandId);
      // Groups stored before fingerprints were kept have none: a retry of theirs is answered as before.
      const keyReused = group.request_fingerprint !== null && !group.request_fingerprint.equals(fingerprints[index]!);
      return { id: Number(group.id), name: group.name, duplicate, keyReused };
    });
  });
}

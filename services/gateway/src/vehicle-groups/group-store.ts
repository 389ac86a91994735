// Vehicle groups in PostgreSQL, as the group reads ask for them: each with its members' vehicle ids in
// ascending order, one by id or a keyset page on the id.
import type { Pool } from 'pg';
import type { GroupFinder, VehicleGroup } from './read-vehicle-groups';
import { boundedByBytes, cutPage, PAGE_MAX_BYTES, type Weighed } from '../page-bytes';

interface GroupRow {
  id: string;
  name: string;
  created_at: Date;
  vehicle_ids: string[];
}

const GROUP_COLUMNS = `
  g.id, g.name, g.created_at,
  coalesce((SELECT array_agg(m.vehicle_id ORDER BY m.vehicle_id) FROM vehicle_group_members m WHERE m.vehicle_group_id = g.id), '{}') AS vehicle_ids`;

const GROUP_PAGE = boundedByBytes({
  inner: `SELECT ${GROUP_COLUMNS} FROM vehicle_groups g WHERE g.id > $1 ORDER BY g.id LIMIT $2`,
  // The ids as PostgreSQL writes an array ({1,2}) take what they take as JSON ([1,2]).
  weight: 'octet_length(vehicle_ids::text) + octet_length(name) + 100',
  order: 'id',
  budgetParameter: '$3',
});

const toGroup = (row: GroupRow): VehicleGroup => ({
  id: Number(row.id),
  vehicleGroupName: row.name,
  vehicleIds: row.vehicle_ids.map(Number),
  createdAt: row.created_at.toISOString(),
});

export function groupStore(pool: Pool): GroupFinder {
  return {
    async findGroup(id) {
      const result = await pool.query<GroupRow>(`SELECT ${GROUP_COLUMNS} FROM vehicle_groups g WHERE g.id = $1`, [id]);
      const row = result.rows[0];
      return row && toGroup(row);
    },
    async findGroups(after, limit) {
      const result = await pool.query<GroupRow & Weighed>(GROUP_PAGE, [after, limit + 1, PAGE_MAX_BYTES]);
      const { items, more } = cutPage(result.rows, limit);
      return { items: items.map(toGroup), more };
    },
  };
}

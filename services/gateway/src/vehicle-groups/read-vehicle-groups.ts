// Vehicle groups read back: one by id, or all of them a page at a time, oldest first. Served from
// PostgreSQL directly; keyset-paged on the id, so a page costs the same however deep it is and a group
// created meanwhile is never answered twice. A group's vehicle ids come in ascending order: a group is a
// set (duplicates were collapsed when it was created).
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { idCursor, parseLimit, parseRecordId } from '../query-parameters';
import type { Slice } from '../page-bytes';

export interface VehicleGroup {
  id: number;
  vehicleGroupName: string;
  vehicleIds: number[];
  createdAt: string;
}

/** Where vehicle groups are read from (group-store.ts: PostgreSQL). */
export interface GroupFinder {
  findGroup(id: number): Promise<VehicleGroup | undefined>;
  /** Up to `limit` groups with an id above `after`, in id order, fewer past PAGE_MAX_BYTES; and whether more follow. */
  findGroups(after: number, limit: number): Promise<Slice<VehicleGroup>>;
}

export interface VehicleGroupPage {
  data: VehicleGroup[];
  /** null on the last page. */
  nextCursor: string | null;
}

const cursors = idCursor('g');

export function createGroupReader(groups: GroupFinder) {
  return {
    async group(rawId: string): Promise<{ message: string; data: VehicleGroup }> {
      const id = parseRecordId(rawId);
      const group = await fromDatabase(() => groups.findGroup(id));
      if (!group) throw new AppError({ kind: 'groupNotFound', detail: `no vehicle group has id ${id}` });
      return { message: 'Vehicle group found', data: group };
    },

    async page(query: { limit?: string; cursor?: string }): Promise<VehicleGroupPage> {
      const limit = parseLimit(query.limit);
      const after = cursors.decode(query.cursor);
      const { items, more } = await fromDatabase(() => groups.findGroups(after, limit));
      return { data: items, nextCursor: more ? cursors.encode(items.at(-1)!.id) : null };
    },
  };
}

export type GroupReader = ReturnType<typeof createGroupReader>;

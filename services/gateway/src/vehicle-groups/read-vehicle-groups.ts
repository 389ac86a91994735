// Vehicle groups read back: one by id, or all of them a page at a time, oldest first. Served from
// PostgreSQL directly; keyset-paged on the id, so a page costs the same however deep it is and a group
// created meanwhile is never answered twice. A group's vehicle ids come in ascending order: a group is a
// set (duplicates were collapsed when it was created).
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { invalidParameter, parseLimit } from '../query-parameters';

export interface VehicleGroup {
  id: number;
  vehicleGroupName: string;
  vehicleIds: number[];
  createdAt: string;
}

/** Where vehicle groups are read from (group-store.ts: PostgreSQL). */
export interface GroupFinder {
  findGroup(id: number): Promise<VehicleGroup | undefined>;
  /** Up to `limit` groups with an id above `after`, in id order. */
  findGroups(after: number, limit: number): Promise<VehicleGroup[]>;
}

export interface VehicleGroupPage {
  data: VehicleGroup[];
  /** null on the last page. */
  nextCursor: string | null;
}

/** A group id as the path carries it: a positive integer. */
function parseGroupId(raw: string): number {
  const id = /^[1-9]\d{0,17}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw invalidParameter('id', 'must be a positive integer');
  return id;
}

/** A cursor is the last id answered, written as a page's nextCursor writes it. */
function parseCursor(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const decoded = /^[A-Za-z0-9_-]{1,32}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  const match = /^g:(\d{1,18})$/.exec(decoded);
  if (!match || !Number.isSafeInteger(Number(match[1]))) throw invalidParameter('cursor', 'is not a cursor this service issued');
  return Number(match[1]);
}

const encodeCursor = (id: number) => Buffer.from(`g:${id}`).toString('base64url');

export function createGroupReader(groups: GroupFinder) {
  return {
    async group(rawId: string): Promise<{ message: string; data: VehicleGroup }> {
      const id = parseGroupId(rawId);
      const group = await fromDatabase(() => groups.findGroup(id));
      if (!group) throw new AppError({ kind: 'groupNotFound', detail: `no vehicle group has id ${id}` });
      return { message: 'Vehicle group found', data: group };
    },

    async page(query: { limit?: string; cursor?: string }): Promise<VehicleGroupPage> {
      const limit = parseLimit(query.limit);
      const after = parseCursor(query.cursor);
      // One more than asked tells whether a next page exists without a count.
      const found = await fromDatabase(() => groups.findGroups(after, limit + 1));
      const data = found.slice(0, limit);
      return { data, nextCursor: found.length > limit ? encodeCursor(data.at(-1)!.id) : null };
    },
  };
}

export type GroupReader = ReturnType<typeof createGroupReader>;

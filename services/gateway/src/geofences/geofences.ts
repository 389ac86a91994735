// Use cases of the geofences an operator draws: created from a validated area, read back one by id or a
// keyset page at a time (oldest first, so a page costs the same however deep), and deleted.
import { AppError } from '@fleet/shared/errors';
import { validationError } from '@fleet/shared/schemas/validation-error';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { idCursor, parseLimit, parseRecordId } from '../query-parameters';
import { geofenceRequestSchema, type Geofence, type GeofenceArea } from './geofence.schema';
import type { Slice } from '../page-bytes';

/** Where geofences are kept (geofence-store.ts: PostgreSQL). */
export interface GeofenceStore {
  add(geofence: { name: string; area: GeofenceArea; speedLimitKmh: number | null }): Promise<Geofence>;
  find(id: number): Promise<Geofence | undefined>;
  /** Up to `limit` geofences with an id above `after`, in id order, fewer past PAGE_MAX_BYTES; and whether more follow. */
  list(after: number, limit: number): Promise<Slice<Geofence>>;
  /** True when it existed. */
  remove(id: number): Promise<boolean>;
}

export interface GeofencePage {
  data: Geofence[];
  nextCursor: string | null;
}

const cursors = idCursor('f');

const notFound = (id: number) => new AppError({ kind: 'geofenceNotFound', detail: `no geofence has id ${id}` });

export function createGeofences(store: GeofenceStore) {
  return {
    async create(body: unknown): Promise<{ message: string; data: Geofence }> {
      const parsed = geofenceRequestSchema.safeParse(body);
      if (!parsed.success) throw validationError(parsed.error);
      const { name, area, speedLimitKmh } = parsed.data;
      const geofence = await fromDatabase(() => store.add({ name, area, speedLimitKmh: speedLimitKmh ?? null }));
      return { message: 'Geofence has been created', data: geofence };
    },

    async get(rawId: string): Promise<{ message: string; data: Geofence }> {
      const id = parseRecordId(rawId);
      const geofence = await fromDatabase(() => store.find(id));
      if (!geofence) throw notFound(id);
      return { message: 'Geofence found', data: geofence };
    },

    async page(query: { limit?: string; cursor?: string }): Promise<GeofencePage> {
      const limit = parseLimit(query.limit);
      const after = cursors.decode(query.cursor);
      const { items, more } = await fromDatabase(() => store.list(after, limit));
      return { data: items, nextCursor: more ? cursors.encode(items.at(-1)!.id) : null };
    },

    async delete(rawId: string): Promise<{ message: string; data: { id: number } }> {
      const id = parseRecordId(rawId);
      if (!(await fromDatabase(() => store.remove(id)))) throw notFound(id);
      return { message: 'Geofence has been deleted', data: { id } };
    },
  };
}

export type Geofences = ReturnType<typeof createGeofences>;

// Use cases of the geofences an operator draws: created from a validated area, read back one by id or a
// keyset page at a time (oldest first, so a page costs the same however deep), and deleted.
import { AppError } from '@fleet/shared/errors';
import { validationError } from '@fleet/shared/schemas/validation-error';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { idCursor, parseLimit, parseRecordId } from '../query-parameters';
import { geofenceRequestSchema, positionsOf, type Geofence, type GeofenceArea } from './geofence.schema';
import type { Slice } from '../page-bytes';

/** Where geofences are kept (geofence-store.ts: PostgreSQL). */
export interface GeofenceStore {
  /** Stores it unless the limits would be passed; then answers what is stored, and stores nothing. */
  add(
    geofence: { name: string; area: GeofenceArea; speedLimitKmh: number | null },
    limits: GeofenceLimits,
  ): Promise<{ geofence: Geofence } | { stored: GeofenceLimits }>;
  find(id: number): Promise<Geofence | undefined>;
  /** Up to `limit` geofences with an id above `after`, in id order, fewer past PAGE_MAX_BYTES; and whether more follow. */
  list(after: number, limit: number): Promise<Slice<Geofence>>;
  /** True when it existed. */
  remove(id: number): Promise<boolean>;
}

/**
 * What the fleet may hold, since every event processor holds all of it in memory and tests every fix
 * against it: geofences, and positions of their polygons in all.
 */
export interface GeofenceLimits {
  geofences: number;
  positions: number;
}

export interface GeofencePage {
  data: Geofence[];
  nextCursor: string | null;
}

const cursors = idCursor('f');

const notFound = (id: number) => new AppError({ kind: 'geofenceNotFound', detail: `no geofence has id ${id}` });

function fullError(limits: GeofenceLimits, stored: GeofenceLimits, positions: number): AppError {
  const detail =
    stored.geofences >= limits.geofences
      ? `at most ${limits.geofences} geofences (GEOFENCES_MAX), and ${stored.geofences} are stored`
      : `at most ${limits.positions} polygon positions in all (GEOFENCES_MAX_POSITIONS): ${stored.positions} are stored and this area has ${positions}`;
  return new AppError({ kind: 'geofencesFull', detail });
}

export function createGeofences(store: GeofenceStore, limits: GeofenceLimits) {
  return {
    async create(body: unknown): Promise<{ message: string; data: Geofence }> {
      const parsed = geofenceRequestSchema.safeParse(body);
      if (!parsed.success) throw validationError(parsed.error);
      const { name, area, speedLimitKmh } = parsed.data;
      const added = await fromDatabase(() => store.add({ name, area, speedLimitKmh: speedLimitKmh ?? null }, limits));
      if ('stored' in added) throw fullError(limits, added.stored, positionsOf(area));
      return { message: 'Geofence has been created', data: added.geofence };
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

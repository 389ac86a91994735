// Geofences in PostgreSQL: the area kept as the GeoJSON (or circle) it was given, as jsonb.
import type { Pool } from 'pg';
import { inTransactionAlone } from '@fleet/shared/db/transaction';
import { positionsOf, type Geofence, type GeofenceArea } from './geofence.schema';
import type { GeofenceStore } from './geofences';
import { boundedByBytes, cutPage, PAGE_MAX_BYTES, type Weighed } from '../page-bytes';

interface GeofenceRow {
  id: string;
  name: string;
  area: GeofenceArea;
  speed_limit_kmh: number | null;
}

const toGeofence = (row: GeofenceRow): Geofence => ({
  id: Number(row.id),
  name: row.name,
  area: row.area,
  speedLimitKmh: row.speed_limit_kmh,
});

const COLUMNS = 'id, name, area, speed_limit_kmh';

/** The key of the advisory lock that serializes geofence creates (any number no other lock uses). */
const GEOFENCE_CREATE_LOCK = 0x6765_6f66;

interface StoredTotals {
  geofences: number;
  positions: number;
}

// Stores the geofence only if the totals stay within the limits ($5 geofences, $6 polygon positions),
// and answers the totals as they were, with the new row when it was stored.
const ADD_WITHIN_LIMITS = `
  WITH stored AS (
    SELECT count(*)::int AS geofences, coalesce(sum(positions), 0)::int AS positions FROM geofences
  ), added AS (
    INSERT INTO geofences (name, area, speed_limit_kmh, positions)
    SELECT $1, $2, $3, $4 FROM stored WHERE stored.geofences < $5 AND stored.positions + $4 <= $6
    RETURNING ${COLUMNS}
  )
  SELECT stored.geofences, stored.positions, added.* FROM stored LEFT JOIN added ON true`;

const GEOFENCE_PAGE = boundedByBytes({
  inner: `SELECT ${COLUMNS} FROM geofences WHERE id > $1 ORDER BY id LIMIT $2`,
  weight: 'octet_length(area::text) + octet_length(name) + 100',
  order: 'id',
  budgetParameter: '$3',
});

export function geofenceStore(pool: Pool): GeofenceStore {
  return {
    async add({ name, area, speedLimitKmh }, limits) {
      return inTransactionAlone(pool, GEOFENCE_CREATE_LOCK, async (client) => {
        const { rows } = await client.query<StoredTotals & Partial<GeofenceRow>>(ADD_WITHIN_LIMITS, [
          name,
          JSON.stringify(area),
          speedLimitKmh,
          positionsOf(area),
          limits.geofences,
          limits.positions,
        ]);
        const row = rows[0]!;
        if (row.id === null || row.id === undefined) return { stored: { geofences: row.geofences, positions: row.positions } };
        return { geofence: toGeofence(row as GeofenceRow) };
      });
    },
    async find(id) {
      const result = await pool.query<GeofenceRow>(`SELECT ${COLUMNS} FROM geofences WHERE id = $1`, [id]);
      const row = result.rows[0];
      return row && toGeofence(row);
    },
    async list(after, limit) {
      const result = await pool.query<GeofenceRow & Weighed>(GEOFENCE_PAGE, [after, limit + 1, PAGE_MAX_BYTES]);
      const { items, more } = cutPage(result.rows, limit);
      return { items: items.map(toGeofence), more };
    },
    async remove(id) {
      const result = await pool.query('DELETE FROM geofences WHERE id = $1', [id]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}

// Geofences in PostgreSQL: the area kept as the GeoJSON (or circle) it was given, as jsonb.
import type { Pool } from 'pg';
import type { Geofence, GeofenceArea } from './geofence.schema';
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

const GEOFENCE_PAGE = boundedByBytes({
  inner: `SELECT ${COLUMNS} FROM geofences WHERE id > $1 ORDER BY id LIMIT $2`,
  weight: 'octet_length(area::text) + octet_length(name) + 100',
  order: 'id',
  budgetParameter: '$3',
});

export function geofenceStore(pool: Pool): GeofenceStore {
  return {
    async add({ name, area, speedLimitKmh }) {
      const result = await pool.query<GeofenceRow>(
        `INSERT INTO geofences (name, area, speed_limit_kmh) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
        [name, JSON.stringify(area), speedLimitKmh],
      );
      return toGeofence(result.rows[0]!);
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

// Devices' registrations and last locations in PostgreSQL, as the device status reads them: the
// registry and device_last_locations joined, one device by IMEI or a keyset page of every device known.
import type { Pool } from 'pg';
import type { DeviceStatusQuery, KnownDevice, KnownDevices } from './device-status';
import { positionColumnsOf, toPosition, type PositionRow } from './position-store';
import { isoMillis, timestampsAsText } from './stored-time';
import { boundedByBytes, cutPage, PAGE_MAX_BYTES, type Weighed } from '../page-bytes';

type StatusRow = Partial<PositionRow> & { device_imei: string; registered: boolean; name: string | null; last_seen_at?: string | null };

// The position's columns are qualified: the registry has an imei of its own.
const LAST_COLUMNS = positionColumnsOf('l');

const STATUS_OF_ONE = `
  SELECT k.imei AS device_imei, d.imei IS NOT NULL AS registered, d.name, l.trip_location_id AS id, l.last_seen_at, ${LAST_COLUMNS}
  FROM (SELECT $1::text AS imei) k
  LEFT JOIN devices d ON d.imei = k.imei
  LEFT JOIN device_last_locations l ON l.imei = k.imei
  WHERE d.imei IS NOT NULL OR l.imei IS NOT NULL`;

/**
 * Every device known, after the cursor's IMEI, of one status or any: $2 null for any, else true for
 * online; online means received at or after $3.
 */
const STATUS_PAGE = boundedByBytes({
  inner: `
    SELECT coalesce(l.imei, d.imei) AS device_imei, d.imei IS NOT NULL AS registered, d.name, l.trip_location_id AS id, l.last_seen_at, ${LAST_COLUMNS}
    FROM device_last_locations l
    FULL JOIN devices d ON d.imei = l.imei
    WHERE coalesce(l.imei, d.imei) > $1
      AND ($2::boolean IS NULL OR $2 = coalesce(l.last_seen_at >= $3, false))
    ORDER BY coalesce(l.imei, d.imei)
    LIMIT $4`,
  // The last position's attributes, and about what the rest of a device's status takes.
  weight: 'coalesce(octet_length(attributes::text), 0) + coalesce(octet_length(name), 0) + 500',
  order: 'device_imei',
  budgetParameter: '$5',
});

function toKnownDevice(row: StatusRow): KnownDevice {
  return {
    imei: row.device_imei,
    registered: row.registered,
    name: row.name,
    lastSeenAt: row.last_seen_at ? isoMillis(row.last_seen_at) : null,
    lastPosition: row.id === null || row.id === undefined ? null : toPosition(row as PositionRow),
  };
}

export function deviceStatusStore(pool: Pool): KnownDevices {
  return {
    async findDevice(imei) {
      const result = await pool.query<StatusRow>({ text: STATUS_OF_ONE, values: [imei], types: timestampsAsText });
      const row = result.rows[0];
      return row && toKnownDevice(row);
    },
    async findDevices({ after, online, onlineSince, limit }: DeviceStatusQuery) {
      const result = await pool.query<StatusRow & Weighed>({
        text: STATUS_PAGE,
        values: [after, online ?? null, onlineSince.toISOString(), limit + 1, PAGE_MAX_BYTES],
        types: timestampsAsText,
      });
      const { items, more } = cutPage(result.rows, limit);
      return { items: items.map(toKnownDevice), more };
    },
  };
}

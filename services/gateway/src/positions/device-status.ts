// A device's status: its registration (name), when it was last heard from (the newest receipt of any of
// its positions, whatever the fix's time), its newest position (by gpsTime), and whether it is online:
// something received within DEVICE_OFFLINE_AFTER. One device by
// IMEI, or every device known (registered, or seen) a page at a time, keyset-paged on the IMEI and
// filtered by status. A device neither registered nor ever seen does not exist: 404.
import type { Pool } from 'pg';
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '../database-read';
import { invalidParameter, parseImei, parseLimit, single } from '../query-parameters';
import { positionColumnsOf, toPosition, type Position, type PositionRow } from './position-store';
import { isoMillis, timestampsAsText } from './stored-time';

export type DeviceState = 'online' | 'offline';

export interface DeviceStatus {
  imei: string;
  /** Present when the device is registered. */
  name?: string | null;
  /** When its newest position was received; null for a registered device never heard from. */
  lastSeenAt: string | null;
  lastPosition: Position | null;
  status: DeviceState;
}

export interface DeviceStatusPage {
  data: DeviceStatus[];
  nextCursor: string | null;
}

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
const STATUS_PAGE = `
  SELECT coalesce(l.imei, d.imei) AS device_imei, d.imei IS NOT NULL AS registered, d.name, l.trip_location_id AS id, l.last_seen_at, ${LAST_COLUMNS}
  FROM device_last_locations l
  FULL JOIN devices d ON d.imei = l.imei
  WHERE coalesce(l.imei, d.imei) > $1
    AND ($2::boolean IS NULL OR $2 = coalesce(l.last_seen_at >= $3, false))
  ORDER BY coalesce(l.imei, d.imei)
  LIMIT $4`;

function parseStatus(raw: unknown): DeviceState | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'online' || raw === 'offline') return raw;
  throw invalidParameter('status', 'must be online or offline');
}

/** A cursor is the last IMEI answered; any other text is refused. */
function parseCursor(raw: unknown): string {
  if (raw === undefined) return '';
  const decoded = typeof raw === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  if (!decoded.startsWith('d:') || decoded.length < 3) throw invalidParameter('cursor', 'is not a cursor this service issued');
  return decoded.slice(2);
}

export interface DeviceStatusDeps {
  pool: Pool;
  /** DEVICE_OFFLINE_AFTER in milliseconds. */
  offlineAfterMs: number;
  now?: () => number;
}

export function createDeviceStatusReader(deps: DeviceStatusDeps) {
  const now = deps.now ?? Date.now;

  const toStatus = (row: StatusRow, onlineSince: number): DeviceStatus => {
    const lastPosition = row.id === null || row.id === undefined ? null : toPosition(row as PositionRow);
    const lastSeenAt = row.last_seen_at ? isoMillis(row.last_seen_at) : null;
    return {
      imei: row.device_imei,
      ...(row.registered ? { name: row.name } : {}),
      lastSeenAt,
      lastPosition,
      status: lastSeenAt !== null && Date.parse(lastSeenAt) >= onlineSince ? 'online' : 'offline',
    };
  };

  return {
    async device(rawImei: string): Promise<{ message: string; data: DeviceStatus }> {
      const imei = parseImei(rawImei);
      const result = await fromDatabase(() => deps.pool.query<StatusRow>({ text: STATUS_OF_ONE, values: [imei], types: timestampsAsText }));
      const row = result.rows[0];
      if (!row) throw new AppError({ kind: 'deviceNotFound', detail: `device ${imei} is neither registered nor ever heard from` });
      return { message: 'Device status', data: toStatus(row, now() - deps.offlineAfterMs) };
    },

    async page(query: Record<string, unknown>): Promise<DeviceStatusPage> {
      const status = parseStatus(single(query, 'status'));
      const limit = parseLimit(single(query, 'limit'));
      const after = parseCursor(single(query, 'cursor'));
      const onlineSince = now() - deps.offlineAfterMs;
      const result = await fromDatabase(() =>
        deps.pool.query<StatusRow>({
          text: STATUS_PAGE,
          values: [after, status === undefined ? null : status === 'online', new Date(onlineSince).toISOString(), limit + 1],
          types: timestampsAsText,
        }),
      );
      const data = result.rows.slice(0, limit).map((row) => toStatus(row, onlineSince));
      const last = data.at(-1);
      return { data, nextCursor: result.rows.length > limit && last ? Buffer.from(`d:${last.imei}`).toString('base64url') : null };
    },
  };
}

export type DeviceStatusReader = ReturnType<typeof createDeviceStatusReader>;

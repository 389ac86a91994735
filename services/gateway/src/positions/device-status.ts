// A device's status: its registration (name), when it was last heard from (the newest receipt of any of
// its positions, whatever the fix's time), its newest position (by gpsTime), and whether it is online:
// something received within DEVICE_OFFLINE_AFTER. One device by
// IMEI, or every device known (registered, or seen) a page at a time, keyset-paged on the IMEI and
// filtered by status. A device neither registered nor ever seen does not exist: 404.
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { invalidParameter, parseImei, parseLimit, single } from '../query-parameters';
import type { Position } from './position-store';
import type { Slice } from '../page-bytes';

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

/** A device as stored: what its status is made of. */
export interface KnownDevice {
  imei: string;
  registered: boolean;
  name: string | null;
  /** When its newest position was received, ISO 8601; null for a registered device never heard from. */
  lastSeenAt: string | null;
  lastPosition: Position | null;
}

export interface DeviceStatusQuery {
  /** The IMEI the page starts after ('' for the first page). */
  after: string;
  /** Online only, offline only, or either (undefined). */
  online: boolean | undefined;
  /** Received at or after this instant is online. */
  onlineSince: Date;
  limit: number;
}

/** Where devices' registrations and last locations are read from (device-status-store.ts: PostgreSQL). */
export interface KnownDevices {
  /** The device, registered or heard from; undefined when it is neither. */
  findDevice(imei: string): Promise<KnownDevice | undefined>;
  /** Up to `limit` known devices after the cursor's IMEI, in IMEI order, fewer past PAGE_MAX_BYTES; and whether more follow. */
  findDevices(query: DeviceStatusQuery): Promise<Slice<KnownDevice>>;
}

export interface DeviceStatusPage {
  data: DeviceStatus[];
  nextCursor: string | null;
}

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
  devices: KnownDevices;
  /** DEVICE_OFFLINE_AFTER in milliseconds. */
  offlineAfterMs: number;
  now?: () => number;
}

export function createDeviceStatusReader(deps: DeviceStatusDeps) {
  const now = deps.now ?? Date.now;

  const toStatus = ({ imei, registered, name, lastSeenAt, lastPosition }: KnownDevice, onlineSince: number): DeviceStatus => ({
    imei,
    ...(registered ? { name } : {}),
    lastSeenAt,
    lastPosition,
    status: lastSeenAt !== null && Date.parse(lastSeenAt) >= onlineSince ? 'online' : 'offline',
  });

  return {
    async device(rawImei: string): Promise<{ message: string; data: DeviceStatus }> {
      const imei = parseImei(rawImei);
      const device = await fromDatabase(() => deps.devices.findDevice(imei));
      if (!device) throw new AppError({ kind: 'deviceNotFound', detail: `device ${imei} is neither registered nor ever heard from` });
      return { message: 'Device status', data: toStatus(device, now() - deps.offlineAfterMs) };
    },

    async page(query: Record<string, unknown>): Promise<DeviceStatusPage> {
      const status = parseStatus(single(query, 'status'));
      const limit = parseLimit(single(query, 'limit'));
      const after = parseCursor(single(query, 'cursor'));
      const onlineSince = now() - deps.offlineAfterMs;
      const { items, more } = await fromDatabase(() =>
        deps.devices.findDevices({
          after,
          online: status === undefined ? undefined : status === 'online',
          onlineSince: new Date(onlineSince),
          limit,
        }),
      );
      const data = items.map((device) => toStatus(device, onlineSince));
      const last = data.at(-1);
      return { data, nextCursor: more && last ? Buffer.from(`d:${last.imei}`).toString('base64url') : null };
    },
  };
}

export type DeviceStatusReader = ReturnType<typeof createDeviceStatusReader>;

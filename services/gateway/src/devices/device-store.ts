// The device registry in PostgreSQL: the devices the tracker protocols accept, each with the hash of
// its key (device-keys.ts). Every statement is parameterised.
import type { Pool } from 'pg';
import { isUniqueViolation } from '@fleet/shared/db/pg-errors';
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import type { DeviceAdministration } from './manage-device';
import type { DeviceEnrolment } from './register-device';
import { hashDeviceKey, newDeviceKey } from '@fleet/write-path/devices/device-keys';

export interface Device {
  imei: string;
  name: string | null;
  createdAt: string;
  keyRotatedAt: string | null;
}

/** A device just registered or given a new key: the key is in this answer and nowhere else. */
export interface DeviceWithKey {
  imei: string;
  name: string | null;
  key: string;
}

interface DeviceRow {
  imei: string;
  name: string | null;
  created_at: Date;
  key_rotated_at: Date | null;
}

const toDevice = (row: DeviceRow): Device => ({
  imei: row.imei,
  name: row.name,
  createdAt: row.created_at.toISOString(),
  keyRotatedAt: row.key_rotated_at?.toISOString() ?? null,
});

/** Registers a device; 409 E-C1/1-01 when its IMEI is registered already. */
export async function addDevice(pool: Pool, imei: string, name: string | undefined): Promise<DeviceWithKey> {
  const key = newDeviceKey();
  await fromDatabase(() =>
    pool
      .query('INSERT INTO devices (imei, name, key_hash) VALUES ($1, $2, $3)', [imei, name ?? null, hashDeviceKey(key)])
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) throw new AppError({ kind: 'deviceExists', detail: `device ${imei} is registered already` });
        throw error;
      }),
  );
  return { imei, name: name ?? null, key };
}

/** Gives a device a new key; the old one stops working. 404 E-N1/1-05 for a device not registered. */
export async function rotateDeviceKey(pool: Pool, imei: string): Promise<DeviceWithKey> {
  const key = newDeviceKey();
  const result = await pool.query<{ name: string | null }>(
    'UPDATE devices SET key_hash = $2, key_rotated_at = now() WHERE imei = $1 RETURNING name',
    [imei, hashDeviceKey(key)],
  );
  const row = result.rows[0];
  if (!row) throw new AppError({ kind: 'deviceNotFound', detail: `device ${imei} is not registered` });
  return { imei, name: row.name, key };
}

/** Removes a device from the registry (its stored positions stay); false when it was not registered. */
export async function removeDevice(pool: Pool, imei: string): Promise<boolean> {
  const result = await pool.query('DELETE FROM devices WHERE imei = $1', [imei]);
  return (result.rowCount ?? 0) > 0;
}

export async function listDevices(pool: Pool): Promise<Device[]> {
  const result = await pool.query<DeviceRow>('SELECT imei, name, created_at, key_rotated_at FROM devices ORDER BY imei');
  return result.rows.map(toDevice);
}

/** Sets or (null) removes a device's own speed limit; any device may have one, registered or not. */
export async function setSpeedLimit(pool: Pool, imei: string, speedLimitKmh: number | null): Promise<void> {
  if (speedLimitKmh === null) {
    await pool.query('DELETE FROM device_settings WHERE imei = $1', [imei]);
    return;
  }
  await pool.query(
    `INSERT INTO device_settings (imei, speed_limit_kmh) VALUES ($1, $2)
     ON CONFLICT (imei) DO UPDATE SET speed_limit_kmh = excluded.speed_limit_kmh, updated_at = now()`,
    [imei, speedLimitKmh],
  );
}

/** Device management over this database, as the device routes ask it. */
export function deviceAdministration(pool: Pool): DeviceAdministration {
  return {
    setSpeedLimit: (imei, limit) => setSpeedLimit(pool, imei, limit),
    removeDevice: (imei) => removeDevice(pool, imei),
    rotateKey: (imei) =>
      rotateDeviceKey(pool, imei).catch((error: unknown) => {
        if (error instanceof AppError && error.kind === 'deviceNotFound') return undefined;
        throw error;
      }),
  };
}

/** Registration over this database, as the register route asks it. */
export function deviceEnrolment(pool: Pool): DeviceEnrolment {
  return { addDevice: (imei, name) => addDevice(pool, imei, name) };
}

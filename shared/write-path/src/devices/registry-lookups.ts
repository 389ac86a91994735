// The device registry's lookups in PostgreSQL: the data-access half of DeviceRegistry.
import type { Pool } from 'pg';
import type { Registration, RegistryLookups } from './device-registry';

/** The device a key belongs to, or undefined. */
export async function deviceOfKeyHash(pool: Pool, keyHash: Buffer): Promise<string | undefined> {
  const result = await pool.query<{ imei: string }>({
    name: 'device-of-key',
    text: 'SELECT imei FROM devices WHERE key_hash = $1',
    values: [keyHash],
  });
  return result.rows[0]?.imei;
}

/** A registered device's registration: since when its key has been the one it has; undefined when it is not registered. */
export async function deviceRegistration(pool: Pool, imei: string): Promise<Registration | undefined> {
  const result = await pool.query<{ key_since: Date }>({
    name: 'device-registration',
    text: 'SELECT coalesce(key_rotated_at, created_at) AS key_since FROM devices WHERE imei = $1',
    values: [imei],
  });
  const row = result.rows[0];
  return row && { keySince: row.key_since.getTime() };
}

/** The registry's lookups in this database, as DeviceRegistry asks them. */
export function registryLookups(pool: Pool): RegistryLookups {
  return {
    deviceOfKeyHash: (keyHash) => deviceOfKeyHash(pool, keyHash),
    deviceRegistration: (imei) => deviceRegistration(pool, imei),
  };
}

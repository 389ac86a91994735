// API keys in PostgreSQL. Only the SHA-256 digest of a key is stored: a leaked table grants nothing,
// and the key itself is shown once, when it is created.
import type { Pool } from 'pg';
import { generateApiKey, hashApiKey } from './api-key-hash';

export class ApiKeyLabelTaken extends Error {
  override name = 'ApiKeyLabelTaken';
}

/** Stores a new key under the label and returns the key, which is not kept anywhere else. */
export async function createApiKey(pool: Pool, label: string): Promise<string> {
  const key = generateApiKey();
  try {
    await pool.query('INSERT INTO api_keys (label, key_hash) VALUES ($1, $2)', [label, hashApiKey(key)]);
  } catch (error) {
    if ((error as { constraint?: string }).constraint === 'api_keys_active_label_key') {
      throw new ApiKeyLabelTaken(`an active key is already labelled "${label}": revoke it first or choose another label`);
    }
    throw error;
  }
  return key;
}

/** Revokes the active key with the label; false when there is none. */
export async function revokeApiKey(pool: Pool, label: string): Promise<boolean> {
  const result = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE label = $1 AND revoked_at IS NULL', [label]);
  return (result.rowCount ?? 0) > 0;
}

export interface ApiKeyListing {
  label: string;
  created_at: Date;
  revoked_at: Date | null;
}

export async function listApiKeys(pool: Pool): Promise<ApiKeyListing[]> {
  const result = await pool.query<ApiKeyListing>('SELECT label, created_at, revoked_at FROM api_keys ORDER BY created_at, id');
  return result.rows;
}

export async function activeApiKeyHashes(pool: Pool): Promise<Buffer[]> {
  const result = await pool.query<{ key_hash: Buffer }>('SELECT key_hash FROM api_keys WHERE revoked_at IS NULL');
  return result.rows.map((row) => row.key_hash);
}

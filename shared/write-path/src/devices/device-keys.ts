// A device's key: 32 random bytes, written base64url (43 characters, safe in a URL path). Only its
// SHA-256 is stored and looked up: the key has the entropy of a secret, so a plain hash cannot be
// reversed by guessing, and one lookup by hash finds its device.
import { createHash, randomBytes } from 'node:crypto';

const KEY_BYTES = 32;
/** The shape of a key as issued, so that anything else is refused before it costs a lookup. */
export const DEVICE_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newDeviceKey(): string {
  return randomBytes(KEY_BYTES).toString('base64url');
}

export function hashDeviceKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

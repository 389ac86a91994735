// An API key and its digest: only the SHA-256 digest is stored and compared, the key itself is shown once.
import { createHash, randomBytes } from 'node:crypto';

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** 32 random bytes, base64url: 43 characters that survive a header and a shell unquoted. */
export function generateApiKey(): string {
  return randomBytes(32).toString('base64url');
}

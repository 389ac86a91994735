// The development JWT secret: generated once per checkout and kept in .dev/ (git-ignored), so tokens
// minted with `npm run dev-token` keep working across restarts. Never used when a key is configured.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const devSecretPath = path.join(repoRoot, '.dev', 'jwt-secret');

export function devJwtSecret(): { secret: string; created: boolean } {
  if (existsSync(devSecretPath)) return { secret: readFileSync(devSecretPath, 'utf8').trim(), created: false };
  mkdirSync(path.dirname(devSecretPath), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(devSecretPath, `${secret}\n`, { mode: 0o600 });
  return { secret, created: true };
}

// Development credentials: generated once per checkout and kept in .dev/ (git-ignored), so tokens
// minted with `npm run dev-token` and the development API key keep working across restarts. Never
// used when the operator configures their own.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..', '..');

export interface DevCredential {
  value: string;
  created: boolean;
  /** Where it is kept, relative to the repository root. */
  file: string;
}

export function devCredential(name: 'jwt-secret' | 'api-key'): DevCredential {
  const file = path.join(repoRoot, '.dev', name);
  const relative = path.relative(repoRoot, file);
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false, file: relative };
  mkdirSync(path.dirname(file), { recursive: true });
  const value = randomBytes(32).toString('base64url');
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return { value, created: true, file: relative };
}

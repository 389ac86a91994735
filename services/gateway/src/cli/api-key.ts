// `npm run api-key -- create <label> | revoke <label> | list`: manages the API keys of the category
// read in DATABASE_URL. A created key is printed once, alone on stdout, and only its hash is stored;
// running gateways pick up a change within API_KEY_REFRESH_SECONDS.
import { z } from 'zod';
import { loadConfig, postgresUrl } from '@fleet/shared/config';
import { createPool } from '@fleet/shared/db/pool';
import { positionals, runAsProgram, type CliIo } from './cli-io';
import { ApiKeyLabelTaken, createApiKey, listApiKeys, revokeApiKey } from '../api-keys/api-key-store';

const USAGE = 'usage: npm run api-key -- create <label> | revoke <label> | list';
const labelSchema = z.string().trim().min(1, 'a label is required').max(100, 'a label has at most 100 characters');

type Command = { name: 'create' | 'revoke'; label: string } | { name: 'list' };

export function parseApiKeyArgs(args: readonly string[]): Command | { problem: string } {
  const words = positionals(args);
  if (!words) return { problem: USAGE };
  const [name, ...rest] = words;
  if (name === 'list' && rest.length === 0) return { name };
  if (name !== 'create' && name !== 'revoke') return { problem: USAGE };
  const label = labelSchema.safeParse(rest.join(' '));
  if (!label.success) return { problem: `${label.error.issues[0]?.message}\n${USAGE}` };
  return { name, label: label.data };
}

export async function runApiKeyCli(args: readonly string[], io: CliIo): Promise<number> {
  const command = parseApiKeyArgs(args);
  if ('problem' in command) {
    io.err(command.problem);
    return 2;
  }
  const config = loadConfig(z.object({ DATABASE_URL: postgresUrl }), io.env);
  const pool = createPool({ connectionString: config.DATABASE_URL, max: 1, applicationName: 'fleet-api-key-cli' });
  try {
    if (command.name === 'create') {
      io.out(await createApiKey(pool, command.label));
      io.err(`created API key "${command.label}": store it now, it is not shown again`);
    } else if (command.name === 'revoke') {
      if (!(await revokeApiKey(pool, command.label))) {
        io.err(`no active API key is labelled "${command.label}"`);
        return 1;
      }
      io.err(`revoked API key "${command.label}"`);
    } else {
      for (const key of await listApiKeys(pool)) {
        const state = key.revoked_at ? `revoked ${key.revoked_at.toISOString()}` : 'active';
        io.out(`${key.label}\tcreated ${key.created_at.toISOString()}\t${state}`);
      }
    }
    return 0;
  } catch (error) {
    io.err(error instanceof ApiKeyLabelTaken ? error.message : `api-key ${command.name} failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await pool.end();
  }
}

if (require.main === module) runAsProgram(runApiKeyCli);

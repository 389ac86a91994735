// Schema migrations, run with node-pg-migrate from the SQL files in shared/migrations. The runner takes
// an advisory lock, so several processes starting at once apply each migration exactly once.
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import type { Logger } from '../logger';
import { ensureDatabase } from './pool';

export const migrationsDir = path.resolve(__dirname, '..', '..', 'migrations');

export async function migrate(connectionString: string, logger: Logger): Promise<string[]> {
  if (await ensureDatabase(connectionString)) logger.info('created the database');
  const applied = await runner({
    databaseUrl: connectionString,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    log: (message) => logger.debug(message),
  });
  const names = applied.map((migration) => migration.name);
  logger.info({ applied: names }, names.length ? 'applied migrations' : 'schema is up to date');
  return names;
}

// A PostgreSQL database of one test's own on the run's server, for what must not reach the other tests
// sharing the run's database (retention dropping days, injected faults, thousands of partitions). Its
// name extends the run's, so it contains "test" too.
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { migrate } from '@fleet/shared/db/migrate';
import { dropDatabase, ensureDatabase } from '@fleet/shared/db/pool';
import { createLogger } from '@fleet/shared/logger';
import { testServers } from './harness';

export interface PrivateDatabase {
  url: string;
  /** A small pool on it, for asserting what the services stored. */
  pool: Pool;
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

/** `migrated`: with the schema, as a service finds it; else empty, for a test that migrates it itself. */
export async function privateDatabase(label: string, { migrated = true }: { migrated?: boolean } = {}): Promise<PrivateDatabase> {
  const url = new URL(testServers().databaseUrl);
  url.pathname = `${url.pathname}_${label}_${randomBytes(3).toString('hex')}`;
  await ensureDatabase(url.toString());
  if (migrated) await migrate(url.toString(), createLogger('test-setup', 'warn'));
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  // An idle connection ended by the server (the database dropped with FORCE) is no test's failure.
  pool.on('error', () => undefined);
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      await dropDatabase(url.toString());
    },
  };
}

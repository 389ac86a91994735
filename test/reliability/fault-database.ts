// The PostgreSQL outage of the fault tests, on a database of the test's own (a private database), driven
// from the server's maintenance database, which stays reachable.
import { Client, escapeIdentifier } from 'pg';
import { testServers } from '../support/harness';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

export interface FaultyDatabase extends PrivateDatabase {
  /**
   * The services' connections die mid-use and come back at once for 1.5 s, then the database refuses
   * new ones for `refusedForMs` while open ones keep dying. Resolves with how many were terminated.
   */
  cutConnections(refusedForMs: number): Promise<number>;
}

/** A private database (with the schema) whose connections a test can cut; drop() lets them in again first. */
export async function faultyDatabase(): Promise<FaultyDatabase> {
  const database = await privateDatabase('fault');
  const name = decodeURIComponent(new URL(database.url).pathname.slice(1));
  const adminUrl = new URL(testServers().databaseUrl);
  adminUrl.pathname = '/postgres';
  const admin = new Client({ connectionString: adminUrl.toString() });
  await admin.connect();

  const allowConnections = (allowed: boolean) => admin.query(`ALTER DATABASE ${escapeIdentifier(name)} WITH ALLOW_CONNECTIONS ${allowed}`);
  /** Terminates the services' connections every `everyMs` for `forMs`. */
  async function terminateRepeatedly(everyMs: number, forMs: number): Promise<number> {
    let terminated = 0;
    const until = Date.now() + forMs;
    while (Date.now() < until) {
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'fleet-%'`,
        [name],
      );
      terminated += rowCount ?? 0;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    return terminated;
  }

  return {
    ...database,
    async cutConnections(refusedForMs) {
      let terminated = await terminateRepeatedly(100, 1500);
      await allowConnections(false);
      terminated += await terminateRepeatedly(200, refusedForMs);
      await allowConnections(true);
      return terminated;
    },
    async drop() {
      await allowConnections(true).catch(() => undefined);
      await admin.end();
      await database.drop();
    },
  };
}

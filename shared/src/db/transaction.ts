// A client of its own, and one transaction on it, for the work that spans several statements.
import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` on a client checked out for it. The pool stops listening to a client it has handed out:
 * a connection the server ends while it is held (an administrator's terminate, a failover, a restart)
 * emits an error nobody hears, which ends the process. It is heard here, and the statement in hand or
 * the next fails instead. A client whose work failed is closed, not put back: it may have lost its
 * connection, or still hold a session's lock.
 */
export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failure: Error | undefined;
  const onLost = (error: Error) => {
    failure ??= error;
  };
  client.on('error', onLost);
  try {
    return await work(client);
  } catch (error) {
    failure ??= error as Error;
    throw error;
  } finally {
    client.removeListener('error', onLost);
    client.release(failure);
  }
}

/**
 * Runs `work` between BEGIN and COMMIT, or ROLLBACK when it throws: on a client of its own (withClient)
 * when given the pool, or on the client the caller already holds.
 */
export async function inTransaction<T>(db: Pool | PoolClient, work: (client: PoolClient) => Promise<T>): Promise<T> {
  if (!('release' in db)) return withClient(db, (client) => inTransaction(client, work));
  await db.query('BEGIN');
  try {
    const result = await work(db);
    await db.query('COMMIT');
    return result;
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * `inTransaction`, one at a time for `lock`: `work` starts once it holds a transaction-scoped advisory
 * lock, so that two which count what is stored before adding to it cannot both take the last place.
 */
export function inTransactionAlone<T>(pool: Pool, lock: number, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [lock]);
    return work(client);
  });
}

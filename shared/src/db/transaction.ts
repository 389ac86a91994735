// One transaction on a client of its own, for the stores whose work spans several statements.
import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` between BEGIN and COMMIT, or ROLLBACK when it throws. The pool stops listening to a client
 * it has handed out: a connection the server ends between two statements would emit an error nobody
 * hears and crash the process, so it is heard here, and the statement that follows fails instead. A
 * client whose statement failed may have lost its connection: it is closed, not put back.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    lost ??= error as Error;
    throw error;
  } finally {
    client.removeListener('error', onLost);
    client.release(lost);
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

// How every read the gateway serves from PostgreSQL fails when the database cannot answer, or when the
// gateway's connections for it are all taken: a 503 the client may retry, never a 500.
import { isDatabaseUnavailable, isPoolExhausted } from '@fleet/shared/db/pg-errors';
import { AppError } from '@fleet/shared/errors';

export const POOL_EXHAUSTED_DETAIL = "every one of the gateway's database connections for these requests is in use";

/**
 * Runs a database read; a database that cannot be reached or refuses work becomes a retry-safe 503, and
 * so does a pool whose every connection stayed busy (saying so: the database is not down, and an
 * operator seeing it should look at the load, not at PostgreSQL).
 */
export async function fromDatabase<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isPoolExhausted(error)) {
      throw new AppError({ kind: 'busy', detail: POOL_EXHAUSTED_DETAIL, retryAfterSeconds: 1, cause: error });
    }
    if (!isDatabaseUnavailable(error)) throw error;
    throw new AppError({ kind: 'databaseUnavailable', retryAfterSeconds: 1, cause: error });
  }
}

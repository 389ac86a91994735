// How every read the gateway serves from PostgreSQL fails when the database cannot answer: a 503 the
// client may retry, never a 500.
import { isDatabaseUnavailable } from '@fleet/shared/db/pg-errors';
import { AppError } from '@fleet/shared/errors';

/** Runs a database read; a database that cannot be reached or refuses work becomes a retry-safe 503. */
export async function fromDatabase<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    throw new AppError({ kind: 'databaseUnavailable', retryAfterSeconds: 1, cause: error });
  }
}

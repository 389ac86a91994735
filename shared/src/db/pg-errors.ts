// The one classifier of PostgreSQL errors, by what a caller can do about them:
// - refused: the data of the statement is at fault (SQLSTATE class 22, data exception: a date out of
//   range, a NUL byte in text; class 23, integrity constraint violation); the same statement fails the
//   same way however often it is retried.
// - unavailable: the server cannot serve now (class 08 connection exception, 53 insufficient resources,
//   57P operator intervention such as a shutdown, 55000 which a database whose connections are switched
//   off (ALLOW_CONNECTIONS false, as during maintenance) answers at connect time, or a connection that
//   could not be had or was lost); a later attempt may pass.
// - other: anything else, e.g. a fault in the query itself.
import { DatabaseError } from 'pg';

export type DatabaseErrorKind = 'refused' | 'unavailable' | 'other';

const refusedStates = /^2[23][0-9A-Z]{3}$/;
const unavailableStates = /^(08|53|57P|55000$)/;
/** What pg throws, without a SQLSTATE, when a connection cannot be had or is lost mid-query. */
/** Node's system error codes (ECONNREFUSED, ETIMEDOUT...), not this service's own E-X1/1-00 codes. */
const systemErrorCode = /^E[A-Z0-9]+$/;
const connectionFailures = /connection terminated|timeout exceeded when trying to connect|connection error|not queryable/i;

export function classifyDatabaseError(error: unknown): DatabaseErrorKind {
  // Duck-typed: errors may come from another realm (a test VM), where instanceof fails.
  if (typeof error !== 'object' || error === null) return 'other';
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && refusedStates.test(code)) return 'refused';
  if (error instanceof DatabaseError) return unavailableStates.test(error.code ?? '') ? 'unavailable' : 'other';
  // A socket error (ECONNREFUSED, ETIMEDOUT, ...) or one of pg's own connection messages.
  if (typeof code === 'string' && systemErrorCode.test(code)) return 'unavailable';
  if (typeof message === 'string' && connectionFailures.test(message)) return 'unavailable';
  return 'other';
}

/**
 * SQLSTATEs a statement may fail with now and pass with later as it is: the connection (08), a
 * serialization failure or deadlock (40), a disk that is full or connections used up (53100, 53300), an
 * object in use or locked (55000, 55006, 55P03), the operator (57), a system error (58).
 */
const transientStates = /^(08|40|53100$|53300$|55000$|55006$|55P03$|57|58)/;

/**
 * True when the database answered the statement with an error that retrying it is not known to fix: its
 * data refused, or the statement itself failing (out of shared memory for its locks, a program limit).
 */
export function isStatementFailure(error: unknown): boolean {
  if (isDataRefusal(error)) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code } = error as { code?: unknown };
  return error instanceof DatabaseError && typeof code === 'string' && !transientStates.test(code);
}

/** True when the database refused the data: no retry can succeed. */
export function isDataRefusal(error: unknown): boolean {
  return classifyDatabaseError(error) === 'refused';
}

/** True when the database could not be reached or is refusing work, i.e. a retry later may succeed. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return classifyDatabaseError(error) === 'unavailable';
}

/** True when a row's unique key exists already (23505): what was to be created is there. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

/**
 * True when a pool's every connection was in use for as long as a query may wait for one: the database
 * may be answering, only this process asks more of it at once than its pool holds. (pg-pool's own
 * message; a new connection that cannot be made in time fails with another.)
 */
export function isPoolExhausted(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { message?: unknown }).message === 'timeout exceeded when trying to connect'
  );
}

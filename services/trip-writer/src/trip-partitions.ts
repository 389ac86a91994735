// The daily partitions of trip_locations: their names and bounds (one UTC day of gps_time each, as the
// migration that partitioned the table made them), and the statements that create, list and drop them.
// DDL takes no parameters, so names and bounds are written by this module from dates it formatted itself,
// checked against DAY_PATTERN, and quoted by pg's escaping; nothing a client sent reaches the SQL text.
import { escapeIdentifier, escapeLiteral, type Pool, type PoolClient } from 'pg';
import { inTransaction } from '@fleet/shared/db/transaction';

/** A UTC day, YYYY-MM-DD. */
export type Day = string;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const PARENT = 'trip_locations';
const NAME_PREFIX = `${PARENT}_p`;
const NAME_PATTERN = /^trip_locations_p(\d{4})(\d{2})(\d{2})$/;

/**
 * Dropping a partition locks trip_locations itself, and attaching one takes a lock that only other DDL
 * waits for. Waiting behind a long read would stall every insert queued behind a DROP, so the DDL gives
 * up instead; the caller retries later.
 */
const DDL_LOCK_TIMEOUT = '5s';

/** PostgreSQL errors that mean another writer created the same partition at the same moment. */
const CREATED_CONCURRENTLY = new Set(['42P07', '23505']);

type Queryable = Pool | PoolClient;

/** The UTC day of an instant; undefined for text that is no instant. */
export function dayOf(time: string | Date): Day | undefined {
  const ms = typeof time === 'string' ? Date.parse(time) : time.getTime();
  if (Number.isNaN(ms)) return undefined;
  const day = new Date(ms).toISOString().slice(0, 10);
  return DAY_PATTERN.test(day) ? day : undefined;
}

export function startOfDay(day: Day): number {
  if (!DAY_PATTERN.test(day)) throw new Error(`not a day: ${day}`);
  return Date.parse(`${day}T00:00:00.000Z`);
}

/** The day `days` after `day` (before it when negative). */
export function addDays(day: Day, days: number): Day {
  return new Date(startOfDay(day) + days * DAY_MS).toISOString().slice(0, 10);
}

export function partitionName(day: Day): string {
  startOfDay(day);
  return `${NAME_PREFIX}${day.replaceAll('-', '')}`;
}

/** The day a partition holds, from its name; undefined for a table this module did not name. */
export function dayOfPartition(name: string): Day | undefined {
  const match = NAME_PATTERN.exec(name);
  return match ? `${match[1]}-${match[2]}-${match[3]}` : undefined;
}

const bound = (day: Day) => escapeLiteral(`${day} 00:00:00+00`);

function inTransactionWithLockTimeout(db: Queryable, sql: string): Promise<void> {
  return inTransaction(db, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
    await client.query(sql);
  });
}

/**
 * Creates the partition of a day unless it exists. Two writers may create the same one at once; the
 * loser finds it there. Answers true when this call created it.
 *
 * The partition is made as a table of its own and then attached. `CREATE TABLE ... PARTITION OF` would
 * hold an ACCESS EXCLUSIVE lock on trip_locations, waiting for every insert in progress and stalling
 * every insert behind it, so a backfill spanning many new days would stop all devices' writes. Attaching
 * takes SHARE UPDATE EXCLUSIVE, which inserts do not wait for; on an empty table its checks cost nothing.
 */
export async function createPartition(db: Queryable, day: Day): Promise<boolean> {
  const name = partitionName(day);
  const exists = await db.query('SELECT 1 FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace', [name]);
  if (exists.rowCount) return false;
  const table = escapeIdentifier(name);
  try {
    await inTransactionWithLockTimeout(
      db,
      `CREATE TABLE ${table} (LIKE ${escapeIdentifier(PARENT)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
       ALTER TABLE ${escapeIdentifier(PARENT)} ATTACH PARTITION ${table} FOR VALUES FROM (${bound(day)}) TO (${bound(addDays(day, 1))})`,
    );
    return true;
  } catch (error) {
    if (CREATED_CONCURRENTLY.has((error as { code?: string }).code ?? '')) return false;
    throw error;
  }
}

/** Drops a day's partition with its rows. */
export async function dropPartition(db: Queryable, day: Day): Promise<void> {
  await inTransactionWithLockTimeout(db, `DROP TABLE IF EXISTS ${escapeIdentifier(partitionName(day))}`);
}

/** The days that have a partition, oldest first. */
export async function partitionDays(db: Queryable): Promise<Day[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = $1::regclass`,
    [PARENT],
  );
  return rows
    .map((row) => dayOfPartition(row.name))
    .filter((day): day is Day => day !== undefined)
    .sort();
}

// PostgreSQL connections: one pool per process, and the creation of the database itself when missing.
import { Client, Pool, escapeIdentifier } from 'pg';
import type { Logger } from '../logger';

export interface PoolOptions {
  connectionString: string;
  /** DATABASE_POOL_SIZE for a service; a CLI needs one connection. */
  max: number;
  applicationName: string;
  /** Ends a session left idle inside a transaction this long (a service's pool); unset, never. */
  idleInTransactionTimeoutMs?: number;
}

/** How long a pool waits for a connection before the query fails: a database that is away costs no longer. */
export const DATABASE_CONNECT_TIMEOUT_MS = 2000;
const STATEMENT_TIMEOUT_MS = 30_000;
const IDLE_TIMEOUT_MS = 30_000;
/**
 * A process frozen or stalled inside a transaction (SIGSTOP, a paused host) holds its row locks for as
 * long as its session lives, and the member of its consumer group that takes its partitions (once its
 * Kafka session of 6 s or more expires) would wait on them until it woke. The server ends such a session
 * before that, rolling its transaction back; no transaction of the services idles for more than
 * milliseconds between its statements.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5000;

export function createPool(options: PoolOptions, logger?: Logger): Pool {
  const pool = new Pool({
    connectionString: options.connectionString,
    max: options.max,
    application_name: options.applicationName,
    connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    ...(options.idleInTransactionTimeoutMs !== undefined && { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs }),
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', (error) => logger?.warn({ err: error.message }, 'postgres connection lost'));
  return pool;
}

/** A service's pool, once its database has answered; a clear error (and no pool left open) when it does not. */
export async function connectPool(
  config: { DATABASE_URL: string; DATABASE_POOL_SIZE: number },
  service: string,
  logger: Logger,
): Promise<Pool> {
  const pool = createPool(
    {
      connectionString: config.DATABASE_URL,
      max: config.DATABASE_POOL_SIZE,
      applicationName: `fleet-${service}`,
      idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    logger,
  );
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end();
    throw new Error(`PostgreSQL is unreachable at ${redactUrl(config.DATABASE_URL)}: ${(error as Error).message}`, { cause: error });
  }
  return pool;
}

export function databaseName(connectionString: string): string {
  const name = decodeURIComponent(new URL(connectionString).pathname.slice(1));
  if (!name) throw new Error(`DATABASE_URL names no database: ${redactUrl(connectionString)}`);
  return name;
}

/** The URL without its password, for messages. */
export function redactUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** Creates the database named in the URL when it does not exist yet, through the server's `postgres` database. */
export async function ensureDatabase(connectionString: string): Promise<boolean> {
  const name = databaseName(connectionString);
  const adminUrl = new URL(connectionString);
  adminUrl.pathname = '/postgres';
  const client = new Client({ connectionString: adminUrl.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount) return false;
    // CREATE DATABASE takes no parameters; the name is quoted as an identifier by pg itself.
    await client.query(`CREATE DATABASE ${escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    // Two processes may race to create it; the loser finds it there.
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(connectionString: string): Promise<void> {
  const name = databaseName(connectionString);
  const adminUrl = new URL(connectionString);
  adminUrl.pathname = '/postgres';
  const client = new Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

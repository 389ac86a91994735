// Fault 3: PostgreSQL goes away under load without stopping the server (other tests share it): the
// stack runs on a database of its own, whose service connections are terminated again and again, and
// which refuses new connections for a few seconds. Writers keep retrying the batch in hand without
// committing its offsets; the gateway answers the posts that wait too long with 503; after recovery
// every command that reached Kafka is stored, and every acknowledged one is there once.
import { Client, escapeIdentifier, Pool } from 'pg';
import { closeKafka } from '../support/kafka';
import { closeDb, testServers } from '../support/harness';
import { stopAllServices } from '../support/processes';
import {
  audit,
  authorization,
  createPrivateDatabase,
  expectPromiseKept,
  printFigures,
  problemsLogged,
  retryUnconfirmed,
  startLoad,
  startProcessStack,
  storedCount,
  waitUntil,
  type ProcessStack,
} from './fault-support';

const REPLY_TIMEOUT_MS = 3000;

let database: { url: string; drop(): Promise<void> };
let databaseName: string;
let pool: Pool;
let admin: Client;
let stack: ProcessStack;

beforeAll(async () => {
  database = await createPrivateDatabase();
  databaseName = decodeURIComponent(new URL(database.url).pathname.slice(1));
  pool = new Pool({ connectionString: database.url, max: 2 });
  // The outage is driven from the server's maintenance database, which stays reachable.
  const adminUrl = new URL(testServers().databaseUrl);
  adminUrl.pathname = '/postgres';
  admin = new Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  stack = await startProcessStack('database-outage', { env: { DATABASE_URL: database.url, REPLY_TIMEOUT_MS: String(REPLY_TIMEOUT_MS) } });
}, 60_000);
afterAll(async () => {
  await admin?.query(`ALTER DATABASE ${escapeIdentifier(databaseName)} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
  await stopAllServices();
  await pool?.end();
  await admin?.end();
  await database?.drop();
  await closeKafka();
  await closeDb();
});

/** Terminates the services' connections to the test's database every `everyMs` until `untilMs`. */
async function terminateRepeatedly(everyMs: number, forMs: number): Promise<number> {
  let terminated = 0;
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    const { rowCount } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'fleet-%'`,
      [databaseName],
    );
    terminated += rowCount ?? 0;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return terminated;
}

test('connections terminated and refused for seconds under load: writers retry without committing, timeouts answer 503, nothing acknowledged is lost', async () => {
  const headers = await authorization();
  const [writer] = stack.writers;
  const load = startLoad(stack.url, headers, 1500, 4);
  await waitUntil(() => load.answered().ok >= 200, 'the first 200 confirmations', 30_000, 10);

  // First connections die mid-use and come back at once; then the database refuses them for longer
  // than the gateway waits for a reply.
  let terminated = await terminateRepeatedly(100, 1500);
  await admin.query(`ALTER DATABASE ${escapeIdentifier(databaseName)} WITH ALLOW_CONNECTIONS false`);
  terminated += await terminateRepeatedly(200, REPLY_TIMEOUT_MS + 2000);
  await admin.query(`ALTER DATABASE ${escapeIdentifier(databaseName)} WITH ALLOW_CONNECTIONS true`);

  await load.done;
  // Every command that reached Kafka is stored once PostgreSQL is back, before any client retries:
  // a batch that failed was never committed past.
  await waitUntil(async () => (await storedCount(load.posts, pool)) === load.posts.length, 'the writer to catch up', 30_000, 250).catch(
    (error: Error) => {
      throw new Error(`${error.message}\n${problemsLogged([stack.gateway, writer!])}`);
    },
  );
  const storedBeforeRetries = await storedCount(load.posts, pool);
  await retryUnconfirmed(stack.url, headers, load.posts, 30_000);
  const figures = await audit('PostgreSQL connections terminated and refused', load.posts, pool);
  printFigures(figures, { storedBeforeRetries, connectionsTerminated: terminated });

  expectPromiseKept(figures);
  expect(terminated).toBeGreaterThan(0);
  expect(figures.unavailable).toBeGreaterThan(0);
  expect(Object.keys(figures.unavailableCodes)).toEqual(['E-S1/1-02']);
  expect(writer!.isRunning()).toBe(true);
  const messages = writer!.logs.map((line) => line.msg);
  expect(messages).toContain('storing to PostgreSQL failed; retrying without committing offsets');
  expect(messages).toContain('storing to PostgreSQL works again');
}, 120_000);

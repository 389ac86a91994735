// Fault 3: PostgreSQL goes away under load without stopping the server (other tests share it): the
// stack runs on a database of its own, whose service connections are terminated again and again, and
// which refuses new connections for a few seconds. Writers keep retrying the batch in hand without
// committing its offsets; the gateway answers the posts that wait too long with 503; after recovery
// every command that reached Kafka is stored, and every acknowledged one is there once.
import { closeKafka } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged, storedCount, postsSent } from './fault-audit';
import { faultyDatabase, type FaultyDatabase } from './fault-database';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { metricValue } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

const REPLY_TIMEOUT_MS = 3000;

let database: FaultyDatabase;
let stack: ProcessStack;

beforeAll(async () => {
  database = await faultyDatabase();
  stack = await startStack({
    mode: 'processes',
    label: 'database-outage',
    env: { DATABASE_URL: database.url, REPLY_TIMEOUT_MS: String(REPLY_TIMEOUT_MS) },
  });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await database?.drop();
  await closeKafka();
  await closeDb();
});

test('connections terminated and refused for seconds under load: writers retry without committing, timeouts answer 503, nothing acknowledged is lost', async () => {
  const headers = await authorization();
  const [writer] = stack.writers;
  const load = startLoad(stack.url, headers, 4);
  await eventually(() => load.answered().ok >= 200, 30_000, { what: 'the first 200 confirmations', intervalMs: 10 });

  // First connections die mid-use and come back at once; then the database refuses them for longer
  // than the gateway waits for a reply.
  const terminated = await database.cutConnections(REPLY_TIMEOUT_MS + 2000);

  await load.finish();
  // Every command that reached Kafka is stored once PostgreSQL is back, before any client retries:
  // a batch that failed was never committed past. A post shed as backed up (503 E-S1/1-08) never
  // reached it, and is not stored.
  const sent = postsSent(load.posts);
  const shed = load.posts.filter((post) => !sent.includes(post));
  await eventually(async () => (await storedCount(sent, database.pool)) === sent.length, 30_000, {
    what: 'the writer to catch up',
    intervalMs: 250,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${problemsLogged([stack.gateway, writer!])}`);
  });
  const storedBeforeRetries = await storedCount(load.posts, database.pool);
  expect(await storedCount(shed, database.pool)).toBe(0);
  await retryUnconfirmed(stack.url, headers, load.posts, 30_000);
  const figures = await audit('PostgreSQL connections terminated and refused', load.posts, database.pool);
  printFigures('i', figures, { storedBeforeRetries, connectionsTerminated: terminated });

  expectPromiseKept(figures);
  expect(terminated).toBeGreaterThan(0);
  expect(figures.unavailable).toBeGreaterThan(0);
  // Not confirmed in time, or shed at once while the writes ahead wait (MAX_QUEUE_AGE_MS).
  expect(figures.unavailableCodes['E-S1/1-02']).toBeGreaterThan(0);
  expect(Object.keys(figures.unavailableCodes).every((code) => ['E-S1/1-02', 'E-S1/1-08'].includes(code))).toBe(true);
  expect(writer!.isRunning()).toBe(true);
  const messages = writer!.logs.map((line) => line.msg);
  expect(messages).toContain('storing to PostgreSQL failed; retrying without committing offsets');
  expect(messages).toContain('storing to PostgreSQL works again');
  // Logged once per outage, but counted at every failed attempt, for the PostgreSQL alert.
  expect(await metricValue(writer!, 'fleet_writer_store_failures_total')).toBeGreaterThan(1);
}, 120_000);

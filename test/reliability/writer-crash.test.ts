// Fault 1: the trip-writer process is killed with SIGKILL while about 2,000 posts are in flight, then
// restarted. Whatever the writer had stored but not confirmed is redelivered and found as a duplicate;
// whatever timed out is answered 503 and stored once when the client retries.
import { closeKafka } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import {
  audit,
  authorization,
  expectPromiseKept,
  printFigures,
  retryUnconfirmed,
  startLoad,
  startProcessStack,
  waitUntil,
  type ProcessStack,
} from './fault-support';

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startProcessStack('writer-crash', { env: { REPLY_TIMEOUT_MS: '10000' } });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('a trip-writer killed with SIGKILL mid-load and restarted: every 200 has its one row, every 503 retried is stored once', async () => {
  const headers = await authorization();
  const load = startLoad(stack.url, headers, 2000, 2);
  await waitUntil(() => load.answered().ok >= 300, 'the first 300 confirmations', 30_000, 10);

  const [writer] = stack.writers.splice(0, 1);
  writer!.kill('SIGKILL');
  expect(await writer!.exited).toBe('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await stack.addWriter();

  await load.done;
  await retryUnconfirmed(stack.url, headers, load.posts, 90_000);
  const figures = await audit('trip-writer SIGKILL and restart', load.posts);
  printFigures(figures);

  expectPromiseKept(figures);
  expect(figures.ok + figures.unavailable).toBe(figures.sent);
}, 180_000);

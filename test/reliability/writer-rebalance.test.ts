// Fault 2: two trip-writers share the partitions; one stops (SIGTERM, a graceful leave) mid-load, and the
// consumer group rebalances its partitions onto the other. What the leaver had resolved is committed on
// its way out; what it had not is redelivered to the survivor and found as a duplicate.
import { closeKafka } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import {
  audit,
  authorization,
  expectPromiseKept,
  printFigures,
  problemsLogged,
  retryUnconfirmed,
  startLoad,
  startProcessStack,
  waitUntil,
  warmUp,
  type ProcessStack,
} from './fault-support';

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startProcessStack('writer-rebalance', { tripWriters: 2, env: { REPLY_TIMEOUT_MS: '10000' } });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('one of two trip-writers leaves mid-load: the other takes its partitions, every 200 has its one row, every 503 retried is stored once', async () => {
  const headers = await authorization();
  const [leaver, survivor] = stack.writers;
  // Both writers own partitions before the load starts, so the leave moves work that is in progress.
  await warmUp(stack, headers);

  const load = startLoad(stack.url, headers, 2000, 2);
  await waitUntil(() => load.answered().ok >= 500, 'the first 500 confirmations', 30_000, 10).catch((error: Error) => {
    throw new Error(`${error.message}; answered ${JSON.stringify(load.answered())}\n${problemsLogged([stack.gateway, ...stack.writers])}`);
  });
  expect(await leaver!.stop()).toBe(0);

  await load.done;
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);
  const figures = await audit('one of two trip-writers leaves (rebalance)', load.posts);
  printFigures(figures);

  expectPromiseKept(figures);
  expect(figures.ok + figures.unavailable).toBe(figures.sent);
  expect(survivor!.isRunning()).toBe(true);
}, 150_000);

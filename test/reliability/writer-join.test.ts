// Fault 8: a second trip-writer joins the consumer group mid-load. The group rebalances: partitions
// move from the first writer, which finishes or abandons the batches in hand, to the newcomer, which
// reads them from the last committed offset. Whatever is read twice is found as a duplicate; nothing
// is lost, nothing is stored twice, and the newcomer takes a share of the work.
import { closeKafka } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { inFlightAt, secondsToRecover, recoveryBoundSeconds, metricValue } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'writer-join', env: { REPLY_TIMEOUT_MS: '10000' } });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('a second trip-writer joins mid-load: it takes partitions, every 200 has its one row, every other answer is a JSON 503, served again within two sessions and a reply timeout', async () => {
  const headers = await authorization();
  const [first] = stack.writers;
  // Long enough that the load goes on after the newcomer has started.
  const load = startLoad(stack.url, headers, 6);
  await eventually(() => load.answered().ok >= 300 && load.unanswered() > 0, 30_000, {
    what: 'the first 300 confirmations, with posts in flight',
    intervalMs: 1,
  });

  const joinStartedAt = Date.now();
  const newcomer = await stack.addWriter();
  const joinedAt = Date.now();
  const recoverySeconds = await secondsToRecover(() => stack.url, headers, joinedAt);

  await load.finish();
  // Before any client retries: the load's positions are all distinct, so a duplicate here is a
  // command read again after its partition moved.
  const redeliveredDuplicates = (
    await Promise.all([first!, newcomer].map((writer) => metricValue(writer, 'fleet_writer_duplicates_skipped_total')))
  ).reduce((sum, count) => sum + count, 0);
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);
  const figures = await audit('a second trip-writer joins', load.posts);
  const [firstInserted, newcomerInserted] = await Promise.all(
    [first!, newcomer].map((writer) => metricValue(writer, 'fleet_writer_rows_inserted_total')),
  );
  const inFlight = inFlightAt(load.posts, joinStartedAt);
  printFigures('d', figures, { recoverySeconds, inFlightAtJoin: inFlight, redeliveredDuplicates, firstInserted, newcomerInserted });

  expectPromiseKept(figures);
  expect(inFlight).toBeGreaterThan(0);
  expect(newcomerInserted).toBeGreaterThan(0);
  expect(first!.isRunning()).toBe(true);
  expect(recoverySeconds).toBeLessThanOrEqual(recoveryBoundSeconds(stack.env));
}, 150_000);

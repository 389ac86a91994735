// Writers scaled as an autoscaler scales them, under steady trip-create load: from 1 trip-writer to 4,
// one at a time, then back to 1, each leaving with SIGTERM as Kubernetes stops a pod. After each step
// the group's lag must be back under 1,000 within 30 s; in the end every 200 has its one row, nothing
// is stored twice, and every 503 retried is stored once. Each step's pause (the longest stretch without
// a confirmed create) is measured and printed.
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, groupLag } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad, type Post } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { metricValue, warmUp } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

const MOST_WRITERS = 4;
/** What "caught up" means after a step: fewer unconsumed commands than this, within LAG_WITHIN_MS. */
const LAG_BOUND = 1000;
const LAG_WITHIN_MS = 30_000;

let stack: ProcessStack;

beforeAll(async () => {
  // The deployed defaults: a leaver's or a newcomer's rebalance as operators get it.
  stack = await startStack({ mode: 'processes', label: 'writer-scaling', deployedDefaults: true });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

/** The longest stretch between two confirmed creates answered within [from, to], in ms. */
function longestPauseMs(posts: Post[], from: number, to: number): number {
  const confirmed = posts
    .flatMap((post) => post.attempts.filter((attempt) => attempt.status === 200).map((attempt) => attempt.answeredAt))
    .filter((at) => at >= from && at <= to)
    .sort((a, b) => a - b);
  let longest = 0;
  let previous = from;
  for (const at of [...confirmed, to]) {
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return longest;
}

test('trip-writers scaled from 1 to 4 and back to 1 under load: caught up within 30 s of each step, nothing lost, nothing stored twice', async () => {
  const headers = await authorization();
  await warmUp(stack, headers);
  const topic = topicsFor(stack.prefix).tripLocations;
  const groupId = `${stack.prefix}.trip-writer`;
  const load = startLoad(stack.url, headers, 10);
  await eventually(() => load.answered().ok >= 200, 30_000, { what: 'the first 200 confirmations', intervalMs: 10 });

  const steps: Array<{ step: string; pauseMs: number; caughtUpMs: number }> = [];
  const step = async (name: string, change: () => Promise<unknown>) => {
    const startedAt = Date.now();
    await change();
    await eventually(async () => (await groupLag(groupId, topic)) < LAG_BOUND, LAG_WITHIN_MS, {
      what: `the lag under ${LAG_BOUND} after ${name}`,
      intervalMs: 200,
    });
    // A few more confirmations, so that the pause is measured up to the load's going on, not to the check.
    const confirmedBefore = load.answered().ok;
    await eventually(() => load.answered().ok >= confirmedBefore + 20, LAG_WITHIN_MS, {
      what: `creates confirmed again after ${name}`,
      intervalMs: 10,
    });
    steps.push({ step: name, pauseMs: longestPauseMs(load.posts, startedAt, Date.now()), caughtUpMs: Date.now() - startedAt });
  };

  for (let count = 2; count <= MOST_WRITERS; count += 1) await step(`${count - 1} → ${count}`, () => stack.addWriter());
  /** Rows each writer inserted while it ran: every one of the four took partitions and stored. */
  const inserted: number[] = [];
  for (let count = MOST_WRITERS - 1; count >= 1; count -= 1) {
    await step(`${count + 1} → ${count}`, async () => {
      const [leaving] = stack.writers.splice(0, 1);
      inserted.push(await metricValue(leaving!, 'fleet_writer_rows_inserted_total'));
      expect(await leaving!.stop()).toBe(0);
    });
  }

  await load.finish();
  await eventually(async () => (await groupLag(groupId, topic)) === 0, 60_000, {
    what: 'the last writer to consume the whole topic',
    intervalMs: 200,
  });
  await retryUnconfirmed(stack.url, headers, load.posts, 90_000);
  const figures = await audit('trip-writers scaled 1 → 4 → 1 under load', load.posts);
  const [last] = stack.writers;
  inserted.push(await metricValue(last!, 'fleet_writer_rows_inserted_total'));
  const longestPause = Math.max(...steps.map((step) => step.pauseMs));
  const slowestCatchUpMs = Math.max(...steps.map((step) => step.caughtUpMs));
  printFigures(
    'n',
    figures,
    {
      steps: steps.map(({ step: name, pauseMs, caughtUpMs }) => `${name}: longest pause ${pauseMs} ms, caught up in ${caughtUpMs} ms`),
      rowsInsertedByWriter: inserted,
    },
    `– (longest pause ${longestPause} ms; lag under 1,000 within ${(slowestCatchUpMs / 1000).toFixed(1)} s of each step)`,
  );

  expectPromiseKept(figures);
  expect(steps).toHaveLength(2 * (MOST_WRITERS - 1));
  expect(inserted).toHaveLength(MOST_WRITERS);
  for (const rows of inserted) expect(rows).toBeGreaterThan(0);
}, 240_000);

// Fault 10: the gateway process is killed with SIGKILL mid-load, while requests wait for their replies
// (the writer is held with SIGSTOP for a moment, so that they do) and a linger batch of commands is
// gathered but not yet produced. Its clients get no answer for those;
// a new gateway is started, and the clients retry every post that got no 200. Whatever the killed
// gateway had published is stored by the writer all the same and found again by the retry; whatever it
// had not published is stored by the retry. In the end every acknowledged id is a row holding the values
// sent, nothing is stored twice, and no row is left that no client was told of.
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, groupLag } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { audit, expectDataKept, printFigures, replyCounts, storedCount } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { inFlightAt, metricValue, secondsToRecover, recoveryBoundSeconds } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: ProcessStack;
const LINGER_MS = 500;

beforeAll(async () => {
  stack = await startStack({
    mode: 'processes',
    label: 'gateway-crash',
    env: {
      REPLY_TIMEOUT_MS: '10000',
      // Commands gather for 500 ms before each produce: a kill timed just after one leaves finds the
      // next still gathering, accepted by the gateway and never sent.
      KAFKA_LINGER_MS: String(LINGER_MS),
    },
  });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('the gateway killed with SIGKILL with replies pending and a linger batch unsent: after a restart and client retries, every post is stored once and acknowledged', async () => {
  const headers = await authorization();
  // The clients follow the gateway: posts sent while none runs fail to connect, and are retried.
  const load = startLoad(() => stack.url, headers, 3);
  await eventually(() => load.answered().ok >= 300, 30_000, { what: 'the first 300 confirmations', intervalMs: 10 });
  // The writer is held still for a moment, so that published commands wait for their replies when the
  // gateway dies; it carries on as soon as the gateway is gone.
  const [writer] = stack.writers;
  writer!.kill('SIGSTOP');
  // The kill follows the scrape that saw both kinds of work at once: commands published and waiting
  // for their replies, and commands accepted into a linger batch not yet handed to the producer. It is
  // timed by the batches: a scrape that finds fewer unsent commands than the one before comes just after
  // a batch left, and the next leaves LINGER_MS after it, so the commands gathering meanwhile are still
  // unsent when the kill lands (a kill timed by any scrape could find the batch just gone).
  let pendingAtKill = 0;
  let unsentAtKill = 0;
  let unsentBefore: number | undefined;
  await eventually(
    async () => {
      [pendingAtKill, unsentAtKill] = await Promise.all([
        metricValue(stack.gateway, 'fleet_kafka_pending_replies'),
        metricValue(stack.gateway, 'fleet_kafka_unsent_commands'),
      ]);
      const batchJustLeft = unsentBefore !== undefined && unsentAtKill < unsentBefore;
      unsentBefore = unsentAtKill;
      return batchJustLeft && pendingAtKill >= 100 && pendingAtKill > unsentAtKill && unsentAtKill > 0;
    },
    10_000,
    { what: 'requests waiting for replies just after a linger batch left', intervalMs: 10 },
  );

  const killed = stack.gateway;
  killed.kill('SIGKILL');
  const killedAt = Date.now();
  writer!.kill('SIGCONT');
  expect(await killed.exited).toBe('SIGKILL');
  await stack.restartGateway();
  const restartedAt = Date.now();
  const recoverySeconds = await secondsToRecover(() => stack.url, headers, restartedAt);
  await load.finish();

  // Before any retry: the writer has stored everything the killed gateway published.
  const { prefix } = stack;
  await eventually(async () => (await groupLag(`${prefix}.trip-writer`, `${prefix}.trip-locations`)) === 0, 30_000, {
    what: 'the writer to catch up',
    intervalMs: 250,
  });
  // Posts the gateway had accepted when it was killed; the ones sent later found no gateway at all.
  const cutOff = load.posts.filter((post) => post.attempts[0]!.status === 'network-error' && post.attempts[0]!.startedAt < killedAt);
  const storedUnanswered = await storedCount(cutOff);
  // Before any retry, nothing was delivered twice: the gateway published each command once, the writer
  // answered each once, and found none stored already.
  const topics = topicsFor(prefix);
  const replies = await replyCounts(topics.tripLocations, topics.replies);
  const duplicatesBeforeRetries = await metricValue(stack.writers[0]!, 'fleet_writer_duplicates_skipped_total');
  await retryUnconfirmed(() => stack.url, headers, load.posts, 60_000);
  const figures = await audit('gateway SIGKILL with replies pending, restarted, clients retry', load.posts);
  const inFlight = inFlightAt(load.posts, killedAt);
  printFigures('f', figures, {
    recoverySeconds,
    secondsGatewayGone: Math.round((restartedAt - killedAt) / 100) / 10,
    pendingAtKill,
    unsentAtKill,
    inFlightAtKill: inFlight,
    cutOff: cutOff.length,
    storedUnanswered,
    unsent: cutOff.length - storedUnanswered,
    replies,
  });

  expectDataKept(figures);
  expect({ ...replies, duplicatesBeforeRetries }).toEqual({
    commands: replies.commands,
    publishedTwice: 0,
    unanswered: 0,
    answeredOnce: replies.commands,
    answeredTwice: 0,
    answeredMore: 0,
    duplicatesBeforeRetries: 0,
  });
  // The other answers are as the API promises: only the requests the kill cut off got none.
  expect(figures.otherStatus).toBe(0);
  expect(figures.networkErrors).toBeGreaterThanOrEqual(inFlight);
  // The kill found both kinds of work in flight: published commands waiting for replies (stored, and
  // answered only by the retry) and accepted commands never published (stored only by the retry).
  expect(pendingAtKill).toBeGreaterThanOrEqual(100);
  expect(unsentAtKill).toBeGreaterThan(0);
  expect(inFlight).toBeGreaterThan(0);
  expect(storedUnanswered).toBeGreaterThan(0);
  expect(cutOff.length - storedUnanswered).toBeGreaterThan(0);
  expect(recoverySeconds).toBeLessThanOrEqual(recoveryBoundSeconds(stack.env));
}, 150_000);

// Fault 1: the trip-writer process is killed with SIGKILL while 2,000 posts are in flight, and another
// is started. Whatever the killed writer had stored but not committed is redelivered to the new one and
// found as a duplicate (and announced, since the killed writer may have died before announcing it);
// whatever timed out is answered 503 and stored once when the client retries.
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, committedOffsets, groupLag, readTopic } from '../support/kafka';
import { closeDb, db } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { audit, expectOneReplyPerDelivery, expectPromiseKept, printFigures, replyCounts, storedCount } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { inFlightAt, secondsToRecover, recoveryBoundSeconds, metricValue } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startStack({
    mode: 'processes',
    label: 'writer-crash',
    env: {
      REPLY_TIMEOUT_MS: '10000',
    },
    // The killed writer's partitions stay with it until the broker ends its session: the default, 6 s.
    deployedDefaults: true,
  });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('a trip-writer killed with SIGKILL mid-load and another started: every 200 has its one row, every other answer is a JSON 503, served again within two sessions and a reply timeout', async () => {
  const headers = await authorization();
  const load = startLoad(stack.url, headers, 3);
  await eventually(() => load.answered().ok >= 300 && load.unanswered() > 0, 30_000, {
    what: 'the first 300 confirmations, with posts in flight',
    intervalMs: 1,
  });

  const [killed] = stack.writers.splice(0, 1);
  killed!.kill('SIGKILL');
  const killedAt = Date.now();
  expect(await killed!.exited).toBe('SIGKILL');

  // With no writer in the group, its committed offsets stand still. The topic holds the load's trips
  // alone, so `committed` of them were stored and committed, and every stored row beyond those was
  // stored but not committed: the kill landed while work was in flight, and that work comes back.
  const topic = topicsFor(stack.prefix).tripLocations;
  const groupId = `${stack.prefix}.trip-writer`;
  const committed = [...(await committedOffsets(groupId, topic)).values()].reduce((sum, offset) => sum + offset, 0);
  const storedUncommitted = (await storedCount(load.posts)) - committed;
  expect(await groupLag(groupId, topic)).toBeGreaterThan(0);
  expect(storedUncommitted).toBeGreaterThan(0);

  const successor = await stack.addWriter();
  const faultEndedAt = Date.now();
  const recoverySeconds = await secondsToRecover(() => stack.url, headers, faultEndedAt);

  await load.finish();
  // Before any client retries: every duplicate the successor finds now is a redelivered message.
  await eventually(async () => (await groupLag(groupId, topic)) === 0, 60_000, {
    what: 'the successor to consume and commit the whole topic',
    intervalMs: 200,
  });
  // Exactly the messages stored and not committed came back, each found as a duplicate; the killed
  // writer had replied to some of them before it died, so those alone are answered twice.
  const redeliveredDuplicates = await metricValue(successor, 'fleet_writer_duplicates_skipped_total');
  const replies = await replyCounts(topic, topicsFor(stack.prefix).replies);
  expect(redeliveredDuplicates).toBe(storedUncommitted);
  expectOneReplyPerDelivery(replies, redeliveredDuplicates);

  await retryUnconfirmed(stack.url, headers, load.posts, 90_000);
  const figures = await audit('trip-writer SIGKILL, another started', load.posts);
  const inFlight = inFlightAt(load.posts, killedAt);
  printFigures(
    'c',
    figures,
    {
      recoverySeconds,
      secondsFromKillToServing: Math.round((faultEndedAt - killedAt) / 100) / 10 + recoverySeconds,
      inFlightAtKill: inFlight,
      storedUncommittedAtKill: storedUncommitted,
      redeliveredDuplicates,
      replies,
    },
    `${recoverySeconds} (${Math.round((faultEndedAt - killedAt) / 100) / 10 + recoverySeconds} from the kill)`,
  );

  expectPromiseKept(figures);
  // Every stored position was announced to the live streams and the event processor, those the killed
  // writer committed and died before announcing among them: their redelivery announces them.
  const { rows } = await db().query<{ id: string }>('SELECT id FROM trip_locations WHERE imei = ANY($1)', [
    load.posts.map((post) => String(post.trip.imei)),
  ]);
  const announcements = await readTopic(topicsFor(stack.prefix).positions, Number.MAX_SAFE_INTEGER, 10_000);
  const announced = new Set(
    announcements.flatMap((message) => (JSON.parse(message.value!) as Array<{ id: number }>).map((event) => event.id)),
  );
  expect(rows.map((row) => Number(row.id)).filter((id) => !announced.has(id))).toEqual([]);
  expect(inFlight).toBeGreaterThan(0);
  expect(redeliveredDuplicates).toBeGreaterThan(0);
  expect(recoverySeconds).toBeLessThanOrEqual(recoveryBoundSeconds(stack.env));
}, 150_000);

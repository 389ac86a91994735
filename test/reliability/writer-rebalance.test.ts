// Fault 2: two trip-writers share the partitions; one stops (SIGTERM, a graceful leave) mid-load, and the
// consumer group rebalances its partitions onto the other. The leaver commits everything it stored on
// its way out, so the survivor carries on each moved partition after the leaver's last message and
// stores none of them again. The writers log every stored message (LOG_LEVEL debug) for the check.
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, committedOffsets, groupLag } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices, type ServiceProcess } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { warmUp } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: ProcessStack;

/** The messages a writer has logged as stored, as `partition/offset`. */
function storedMessages(writer: ServiceProcess): string[] {
  return writer.logs.filter((line) => line.msg === 'command stored').map((line) => `${String(line.partition)}/${String(line.offset)}`);
}

/** The offset of the last message a writer stored, by partition. */
function lastStored(writer: ServiceProcess): Map<number, number> {
  const last = new Map<number, number>();
  for (const message of storedMessages(writer)) {
    const [partition, offset] = message.split('/').map(Number) as [number, number];
    last.set(partition, Math.max(offset, last.get(partition) ?? -1));
  }
  return last;
}

beforeAll(async () => {
  stack = await startStack({
    mode: 'processes',
    label: 'writer-rebalance',
    tripWriters: 2,
    env: { REPLY_TIMEOUT_MS: '10000' },
    writerEnv: { LOG_LEVEL: 'debug' },
  });
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

  const load = startLoad(stack.url, headers, 2);
  await eventually(() => load.answered().ok >= 500, 30_000, { what: 'the first 500 confirmations', intervalMs: 10 }).catch(
    (error: Error) => {
      throw new Error(
        `${error.message}; answered ${JSON.stringify(load.answered())}\n${problemsLogged([stack.gateway, ...stack.writers])}`,
      );
    },
  );
  const topic = topicsFor(stack.prefix).tripLocations;
  const groupId = `${stack.prefix}.trip-writer`;
  // Not in a quiet moment: the leave lands while the group has messages to consume or commit. A writer
  // stores each message within milliseconds of its publication, so the leaver is held (SIGSTOP) until
  // messages wait on its partitions; its SIGTERM is then handled as it wakes up to them.
  leaver!.kill('SIGSTOP');
  await eventually(async () => (await groupLag(groupId, topic)) > 0, 15_000, {
    what: 'messages waiting for the held leaver',
    intervalMs: 10,
  }).catch((error: Error) => {
    leaver!.kill('SIGCONT');
    throw new Error(`${error.message}; answered ${JSON.stringify(load.answered())}, ${load.unanswered()} unanswered`);
  });
  const stopped = leaver!.stop();
  leaver!.kill('SIGCONT');
  expect(await stopped).toBe(0);

  // Committed on the way out: on every partition it stored to, the group's offset is past the leaver's last message.
  const leaverLast = lastStored(leaver!);
  const committed = await committedOffsets(groupId, topic);
  expect([...leaverLast].filter(([partition, offset]) => (committed.get(partition) ?? 0) <= offset)).toEqual([]);

  // The load runs on until the survivor has gone on where the leaver stopped.
  const carriedOn = () =>
    [...lastStored(survivor!)].filter(([partition, offset]) => leaverLast.has(partition) && offset > leaverLast.get(partition)!);
  await eventually(() => carriedOn().length > 0, 30_000, { what: "the survivor to store on the leaver's partitions", intervalMs: 50 });
  await load.finish();
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);

  // The leave moved work in progress: the survivor went on where the leaver stopped, redelivering none of it.
  const byLeaver = new Set(storedMessages(leaver!));
  expect(storedMessages(survivor!).filter((message) => byLeaver.has(message))).toEqual([]);
  const figures = await audit('one of two trip-writers leaves (rebalance)', load.posts);
  printFigures('e', figures);

  expectPromiseKept(figures);
  expect(figures.ok + figures.unavailable).toBe(figures.sent);
  expect(survivor!.isRunning()).toBe(true);
}, 150_000);

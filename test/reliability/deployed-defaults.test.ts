// Recovery with the settings operators get: no timeout or session is set here, so the consumer session,
// heartbeat, reply and publish timeouts are the deployed defaults. A trip-writer SIGKILLed and started
// again a second later, as `npm start`'s launcher does, confirms writes again within 10 s of the kill; a
// broker frozen for 20 s (SIGSTOP, then SIGCONT) confirms writes again within 5 s of answering again.
// Both under load, audited as every fault test is: each 200 stored once with its values, every other
// answer a JSON 503, every retry stored once. The broker is an Apache Kafka of this file's own.
import { closeDb } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { secondsToRecover } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

/** What the outside test found and the issue bounds: from the kill to the first confirmed write. */
const WRITER_CRASH_BOUND_S = 10;
/** From the broker answering again to the first confirmed write. */
const BROKER_RETURN_BOUND_S = 5;
const FROZEN_MS = 20_000;
/** The launcher's first restart pause (deploy/local/src/start-stack.ts). */
const LAUNCHER_RESTART_PAUSE_MS = 1000;

let broker: PrivateKafka;
let stack: ProcessStack;

beforeAll(async () => {
  broker = await startPrivateKafka();
  stack = await startStack({
    mode: 'processes',
    label: 'deployed-defaults',
    env: { KAFKA_BROKERS: broker.brokers.join(',') },
    deployedDefaults: true,
  });
}, 150_000);
afterAll(async () => {
  broker?.resume();
  await stopAllServices();
  await broker?.stop();
  await closeKafka();
  await closeDb();
});

test(`a trip-writer SIGKILLed and started again: writes are confirmed again within ${WRITER_CRASH_BOUND_S} s of the kill`, async () => {
  const headers = await authorization();
  const load = startLoad(stack.url, headers, 10);
  await eventually(() => load.answered().ok >= 200 && load.unanswered() > 0, 30_000, {
    what: 'the first 200 confirmations, with posts in flight',
    intervalMs: 1,
  });

  const [killed] = stack.writers.splice(0, 1);
  killed!.kill('SIGKILL');
  const killedAt = Date.now();
  expect(await killed!.exited).toBe('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + LAUNCHER_RESTART_PAUSE_MS - Date.now())));
  await stack.addWriter();
  const secondsFromKill = await secondsToRecover(() => stack.url, headers, killedAt).catch((error: Error) => {
    throw new Error(`${error.message}\n${problemsLogged([stack.gateway, ...stack.writers])}`);
  });

  await load.finish();
  await retryUnconfirmed(stack.url, headers, load.posts, 90_000);
  const figures = await audit('trip-writer SIGKILL with the deployed defaults, restarted after 1 s', load.posts);
  printFigures('l', figures, { secondsFromKillToServing: secondsFromKill }, `${secondsFromKill} from the kill`);
  expectPromiseKept(figures);
  expect(secondsFromKill).toBeLessThanOrEqual(WRITER_CRASH_BOUND_S);
}, 180_000);

test(`a broker frozen for 20 s: writes are confirmed again within ${BROKER_RETURN_BOUND_S} s of its return`, async () => {
  const headers = await authorization();
  const load = startLoad(stack.url, headers, 10);
  await eventually(() => load.answered().ok >= 200, 30_000, { what: 'the first 200 confirmations', intervalMs: 10 });

  broker.pause();
  const pausedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, FROZEN_MS));
  broker.resume();
  const resumedAt = Date.now();
  const recoverySeconds = await secondsToRecover(() => stack.url, headers, resumedAt).catch((error: Error) => {
    throw new Error(`${error.message}\n${problemsLogged([stack.gateway, ...stack.writers])}`);
  });

  await load.finish();
  await retryUnconfirmed(stack.url, headers, load.posts, 90_000);
  const figures = await audit('broker frozen 20 s with the deployed defaults', load.posts);
  printFigures('m', figures, { frozenSeconds: (resumedAt - pausedAt) / 1000, recoverySeconds });
  expectPromiseKept(figures);
  expect(recoverySeconds).toBeLessThanOrEqual(BROKER_RETURN_BOUND_S);
}, 180_000);

// Fault 9: the Kafka broker (an Apache Kafka of this file's own) is killed with SIGKILL mid-load and
// started again on its data, as after a crash. While it is gone, writes are answered 503; once it is
// back, the gateway and the writers reconnect by themselves, and every refused post, retried, is stored
// once. Nothing the broker acknowledged before the kill is lost: its log is on disk.
import { closeDb } from '../support/harness';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { inFlightAt, secondsToRecover, recoveryBoundSeconds } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let broker: PrivateKafka;
let stack: ProcessStack;

beforeAll(async () => {
  broker = await startPrivateKafka();
  stack = await startStack({
    mode: 'processes',
    label: 'broker-kill',
    env: { KAFKA_BROKERS: broker.brokers.join(','), REPLY_TIMEOUT_MS: '5000', PUBLISH_TIMEOUT_MS: '2000' },
  });
}, 150_000);
afterAll(async () => {
  await stopAllServices();
  await broker?.stop();
  await closeDb();
});

test('the broker killed with SIGKILL mid-load and started again on its data: every 200 has its one row, every other answer is a JSON 503, served again within two sessions and a reply timeout', async () => {
  const headers = await authorization();
  const load = startLoad(stack.url, headers, 5);
  await eventually(() => load.answered().ok >= 300 && load.unanswered() > 0, 30_000, {
    what: 'the first 300 confirmations, with posts in flight',
    intervalMs: 1,
  });

  const killedPid = broker.pid();
  broker.kill();
  const killedAt = Date.now();
  await broker.restart();
  const faultEndedAt = Date.now();
  const recoverySeconds = await secondsToRecover(() => stack.url, headers, faultEndedAt).catch((error: Error) => {
    throw new Error(`${error.message}\n${problemsLogged([stack.gateway, ...stack.writers])}`);
  });

  await load.finish();
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);
  const figures = await audit('Kafka broker SIGKILL, started again on its data', load.posts);
  const inFlight = inFlightAt(load.posts, killedAt);
  printFigures('a', figures, {
    recoverySeconds,
    secondsBrokerGone: Math.round((faultEndedAt - killedAt) / 100) / 10,
    inFlightAtKill: inFlight,
  });

  expect(broker.pid()).not.toBe(killedPid);
  expectPromiseKept(figures);
  expect(inFlight).toBeGreaterThan(0);
  expect(figures.unavailable).toBeGreaterThan(0);
  expect(recoverySeconds).toBeLessThanOrEqual(recoveryBoundSeconds(stack.env));
  expect([stack.gateway, ...stack.writers].every((service) => service.isRunning())).toBe(true);
}, 180_000);

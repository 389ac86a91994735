// Fault 5: the Kafka broker stops answering (a private mock cluster, frozen with SIGSTOP) while devices
// keep posting. /readyz turns 503 within seconds; once the gateway knows the broker is gone, writes are
// refused with 503 at once instead of waiting out the reply timeout; when the broker answers again the
// stack recovers by itself and every refused post, retried, is stored once.
import { devBrokerClientEnv, startDevBroker, type DevBroker } from '@fleet/shared';
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

const REPLY_TIMEOUT_MS = 5000;
const PUBLISH_TIMEOUT_MS = 2000;

let broker: DevBroker;
let stack: ProcessStack;

beforeAll(async () => {
  broker = await startDevBroker();
  stack = await startProcessStack('broker-outage', {
    env: {
      ...devBrokerClientEnv,
      KAFKA_BROKERS: broker.brokers.join(','),
      REPLY_TIMEOUT_MS: String(REPLY_TIMEOUT_MS),
      PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
    },
  });
}, 60_000);
afterAll(async () => {
  broker?.resume();
  await stopAllServices();
  await broker?.stop();
  await closeDb();
});

async function readiness(): Promise<number> {
  const response = await fetch(`${stack.gateway.url}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
  await response?.text();
  return response?.status ?? 0;
}

test('a frozen broker: /readyz goes 503, writes are refused fast with 503, and everything recovers when it answers again', async () => {
  const headers = await authorization();
  expect(await readiness()).toBe(200);

  const load = startLoad(stack.url, headers, 700, 20);
  await waitUntil(() => load.answered().ok >= 50, 'the first 50 confirmations', 30_000, 10);

  broker.pause();
  const pausedAt = Date.now();
  await waitUntil(async () => (await readiness()) === 503, '/readyz to report the broker down', 15_000, 200);
  const notReadyAt = Date.now();
  // Long enough for the refusals to be measured, short of the consumers' own session timeouts mattering.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  broker.resume();
  const resumedAt = Date.now();
  await waitUntil(async () => (await readiness()) === 200, '/readyz to report ready again', 30_000, 200);
  const readyAgainAt = Date.now();

  await load.done;
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);
  const figures = await audit('Kafka broker frozen (SIGSTOP) and resumed', load.posts);
  const firstAttempts = load.posts.map((post) => post.attempts[0]!);
  // Posts sent once the gateway had declared the broker down, and answered before it came back.
  const refusedWhileDown = firstAttempts.filter((attempt) => attempt.startedAt >= notReadyAt && attempt.startedAt + attempt.ms < resumedAt);
  const slowestRefusalMs = Math.round(Math.max(0, ...refusedWhileDown.map((attempt) => attempt.ms)));
  printFigures(figures, {
    notReadyAfterMs: notReadyAt - pausedAt,
    readyAgainAfterMs: readyAgainAt - resumedAt,
    refusedWhileDown: refusedWhileDown.length,
    slowestRefusalMs,
  });

  expectPromiseKept(figures);
  expect(notReadyAt - pausedAt).toBeLessThan(10_000);
  expect(refusedWhileDown.length).toBeGreaterThan(50);
  expect(refusedWhileDown.every((attempt) => attempt.status === 503 && attempt.code === 'E-S1/1-01')).toBe(true);
  expect(slowestRefusalMs).toBeLessThan(1000);
  // No request hangs: the longest wait is a reply timeout, plus the scheduling noise of a loaded machine.
  expect(figures.maxMs).toBeLessThan(REPLY_TIMEOUT_MS + 3000);
  expect(Object.keys(figures.unavailableCodes).every((code) => ['E-S1/1-01', 'E-S1/1-02'].includes(code))).toBe(true);
}, 150_000);

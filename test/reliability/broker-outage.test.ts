// Fault 5: the Kafka broker stops answering for 10 s (an Apache Kafka of this file's own, frozen with
// SIGSTOP) while devices keep posting 2,000 trip locations. /readyz turns 503 within seconds; once the
// gateway knows the broker is gone, writes are refused with 503 at once instead of waiting out the reply
// timeout; when the broker answers again (SIGCONT) the stack serves again by itself within two consumer sessions and a reply timeout, and
// every refused post, retried, is stored once.
import { closeDb } from '../support/harness';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { stopAllServices } from '../support/processes';
import { audit, expectPromiseKept, printFigures, problemsLogged } from './fault-audit';
import { authorization, retryUnconfirmed, startLoad } from './fault-load';
import { type ProcessStack } from '../support/process-stack';
import { secondsToRecover, recoveryBoundSeconds } from './fault-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

const REPLY_TIMEOUT_MS = 5000;
const PUBLISH_TIMEOUT_MS = 2000;
const FROZEN_MS = 10_000;
const LONGER_THAN_A_REQUEST_MS = 13_000;

let broker: PrivateKafka;
let stack: ProcessStack;

beforeAll(async () => {
  broker = await startPrivateKafka();
  stack = await startStack({
    mode: 'processes',
    label: 'broker-outage',
    env: {
      KAFKA_BROKERS: broker.brokers.join(','),
      REPLY_TIMEOUT_MS: String(REPLY_TIMEOUT_MS),
      PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
    },
  });
}, 150_000);
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

async function freezeUnderLoad(row: string, frozenMs: number): Promise<void> {
  const headers = await authorization();
  expect(await readiness()).toBe(200);

  // 20 s of posting: before, during and after the freeze.
  const load = startLoad(stack.url, headers, 10);
  await eventually(() => load.answered().ok >= 200, 30_000, { what: 'the first 200 confirmations', intervalMs: 10 });

  broker.pause();
  const pausedAt = Date.now();
  await eventually(async () => (await readiness()) === 503, 15_000, { what: '/readyz to report the broker down', intervalMs: 200 });
  const notReadyAt = Date.now();
  // The fault lasts 10 s, whatever the consumers' sessions: they run out while the broker is frozen. On a
  // machine so loaded that the gateway is slow to notice, it lasts until refusals have gone on for 3 s.
  const frozenUntil = Math.max(pausedAt + frozenMs, notReadyAt + 3000);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenUntil - Date.now())));
  broker.resume();
  const resumedAt = Date.now();
  const [recoverySeconds, readyAgainAt] = await Promise.all([
    secondsToRecover(() => stack.url, headers, resumedAt).catch((error: Error) => {
      throw new Error(`${error.message}\n${problemsLogged([stack.gateway, ...stack.writers])}`);
    }),
    eventually(async () => (await readiness()) === 200, 30_000, { what: '/readyz to report ready again', intervalMs: 200 }).then(() =>
      Date.now(),
    ),
  ]);

  await load.finish();
  await retryUnconfirmed(stack.url, headers, load.posts, 60_000);
  const figures = await audit(`Kafka broker frozen (SIGSTOP) for ${frozenMs / 1000} s, then SIGCONT`, load.posts);
  const firstAttempts = load.posts.map((post) => post.attempts[0]!);
  // Posts sent once the gateway had declared the broker down, and answered before it came back.
  const refusedWhileDown = firstAttempts.filter((attempt) => attempt.startedAt >= notReadyAt && attempt.startedAt + attempt.ms < resumedAt);
  const slowestRefusalMs = Math.round(Math.max(0, ...refusedWhileDown.map((attempt) => attempt.ms)));
  printFigures(row, figures, {
    recoverySeconds,
    frozenMs: resumedAt - pausedAt,
    notReadyAfterMs: notReadyAt - pausedAt,
    readyAgainAfterMs: readyAgainAt - resumedAt,
    refusedWhileDown: refusedWhileDown.length,
    slowestRefusalMs,
  });

  expectPromiseKept(figures);
  expect(recoverySeconds).toBeLessThanOrEqual(recoveryBoundSeconds(stack.env));
  expect(refusedWhileDown.length).toBeGreaterThan(50);
  expect(refusedWhileDown.every((attempt) => attempt.status === 503 && attempt.code === 'E-S1/1-01')).toBe(true);
  // Refused without waiting out the reply timeout (the figures say how fast; a loaded machine is slow).
  expect(slowestRefusalMs).toBeLessThan(REPLY_TIMEOUT_MS);
  expect(Object.keys(figures.unavailableCodes).every((code) => ['E-S1/1-01', 'E-S1/1-02', 'E-S1/1-08'].includes(code))).toBe(true);
}

test('a broker frozen for 10 s: /readyz goes 503, writes are refused fast with a JSON 503, every 200 has its one row, served again within two sessions and a reply timeout', async () => {
  await freezeUnderLoad('b', FROZEN_MS);
}, 150_000);

// Longer than a Kafka request may take (10 s): produces abandoned at their timeout are written once the
// broker wakes, and the gateway's idempotent producer must start its sequence numbers afresh.
test('a broker frozen for longer than a Kafka request: the same, and the gateway publishes again', async () => {
  await freezeUnderLoad('b′', LONGER_THAN_A_REQUEST_MS);
}, 150_000);

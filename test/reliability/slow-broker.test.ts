// Fault 6: every broker round trip takes 200 ms longer (a private mock cluster with
// test.mock.broker.rtt; the mock adds the delay to each request a connection has queued, so a write,
// which crosses several requests, slows by seconds). Writes take longer than on a broker without the
// delay and the slowest run into the reply timeout, but nothing is lost. A gateway whose reply timeout is
// shorter than the slowed path answers every post 503, and those posts, retried through a patient
// gateway, are stored once.
import { devBrokerClientEnv, startDevBroker, type DevBroker } from '@fleet/shared';
import { closeDb } from '../support/harness';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import {
  audit,
  authorization,
  expectPromiseKept,
  printFigures,
  retryUnconfirmed,
  startLoad,
  startProcessStack,
  TRIP_PATH,
  type ProcessStack,
} from './fault-support';

const RTT_MS = 200;
/**
 * Shorter than the two slowed round trips every write needs at least: the mock takes a message in as soon
 * as it arrives, but the writer's fetch of the command and the gateway's fetch of the reply each answer
 * RTT_MS later. (600 ms, below the four round trips of publish, fetch, reply, fetch, let one post in a
 * hundred through once the fetch wait was 3 ms.)
 */
const SHORT_REPLY_TIMEOUT_MS = 300;

let slowBroker: DevBroker;
let fast: ProcessStack;
let slow: ProcessStack;
let impatient: ServiceProcess;

beforeAll(async () => {
  slowBroker = await startDevBroker({ rttMs: RTT_MS });
  fast = await startProcessStack('fast-broker', { env: { REPLY_TIMEOUT_MS: '10000' } });
  slow = await startProcessStack('slow-broker', {
    env: { ...devBrokerClientEnv, KAFKA_BROKERS: slowBroker.brokers.join(','), REPLY_TIMEOUT_MS: '10000', PUBLISH_TIMEOUT_MS: '5000' },
  });
  // A second gateway on the same topics, which gives up before any reply can arrive.
  impatient = await spawnService('gateway', { ...slow.env, REPLY_TIMEOUT_MS: String(SHORT_REPLY_TIMEOUT_MS) });
}, 90_000);
afterAll(async () => {
  await stopAllServices();
  await slowBroker?.stop();
  await closeDb();
});

test(`a broker ${RTT_MS} ms slower per round trip: latency grows, nothing is lost, timeouts answer 503 and retries store once`, async () => {
  const headers = await authorization();

  const baseline = startLoad(fast.url, headers, 100, 20);
  await baseline.done;
  const fastFigures = await audit('broker without added latency (baseline)', baseline.posts);

  const patient = startLoad(slow.url, headers, 100, 20);
  await patient.done;
  await retryUnconfirmed(slow.url, headers, patient.posts, 60_000);
  const slowFigures = await audit(`broker with ${RTT_MS} ms round trips`, patient.posts);

  const hurried = startLoad(`${impatient.url}${TRIP_PATH}`, headers, 100, 20);
  await hurried.done;
  await retryUnconfirmed(slow.url, headers, hurried.posts, 60_000);
  const timeoutFigures = await audit(`broker with ${RTT_MS} ms round trips, reply timeout ${SHORT_REPLY_TIMEOUT_MS} ms`, hurried.posts);

  printFigures(fastFigures);
  printFigures(slowFigures);
  printFigures(timeoutFigures);

  for (const figures of [fastFigures, slowFigures, timeoutFigures]) expectPromiseKept(figures);
  expect(fastFigures.ok).toBe(fastFigures.sent);
  expect(slowFigures.p50Ms).toBeGreaterThan(fastFigures.p50Ms + 2 * RTT_MS);
  expect(Object.keys(slowFigures.unavailableCodes).every((code) => code === 'E-S1/1-02')).toBe(true);
  expect(timeoutFigures.unavailable).toBe(timeoutFigures.sent);
  expect(timeoutFigures.unavailableCodes).toEqual({ 'E-S1/1-02': timeoutFigures.sent });
  expect(timeoutFigures.maxMs).toBeLessThan(SHORT_REPLY_TIMEOUT_MS + 2000);
}, 180_000);

// kafkajs 2.2.4 re-arms a 1 ms timer after every check of a connection's request queue, whether or not a
// request waits (upstream issues #1556 and #1704, unreleased): every idle service then wakes about a
// thousand times a second per broker connection, which measured as 40 ms of CPU a second per process.
// It also looks for timed-out requests every 100 ms on every connection, busy or not: ten more wakeups a
// second per connection. patches/kafkajs+2.2.4.patch, applied by `npm install`, checks the queue again
// only when a request waits or a throttle ends, and the timeouts when the earliest request in flight is
// due. This counts the timers an idle, connected client starts and runs, and shows that a request to a
// broker that answers nothing (a frozen node) still fails at its timeout.
import { createHook } from 'node:async_hooks';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { closeKafka, testKafka } from '../support/kafka';
import { startSilentServer } from '../support/silent-server';

let producer: Producer;

beforeAll(async () => {
  producer = testKafka().producer();
  // Connecting asks the broker for its API versions and metadata: the queue has answered requests.
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await closeKafka();
});

test('a connected producer left idle for half a second starts at most a few timers', async () => {
  let timers = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'Timeout') timers += 1;
    },
  });
  hook.enable();
  await new Promise((resolve) => setTimeout(resolve, 500));
  hook.disable();
  // The wait's own timer, and whatever the client schedules on purpose (metadata refresh): far from
  // the ~500 of a 1 ms loop.
  expect(timers).toBeLessThan(25);
});

test('a producer connected and then left idle for a second runs none of its timers', async () => {
  // The client's timers are known from their start (by kafkajs in the stack that starts them), so one
  // armed while connecting is counted each time it runs; the test runner's own are not.
  const clientTimers = new Set<number>();
  let counting = false;
  let runs = 0;
  const hook = createHook({
    init(id, type) {
      if (type === 'Timeout' && new Error().stack?.includes('node_modules/kafkajs/')) clientTimers.add(id);
    },
    before(id) {
      if (counting && clientTimers.has(id)) runs += 1;
    },
  });
  hook.enable();
  const idle = testKafka().producer();
  try {
    await idle.connect();
    counting = true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counting = false;
  } finally {
    hook.disable();
    await idle.disconnect();
  }
  expect(clientTimers.size).toBeGreaterThan(0);
  // A check every 100 ms would have run ten times per connection.
  expect(runs).toBe(0);
});

test('a request to a broker that accepts connections and answers nothing fails at its timeout', async () => {
  const silent = await startSilentServer();
  const frozen = new Kafka({
    brokers: [silent.address],
    clientId: 'fleet-tests',
    requestTimeout: 300,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).producer();
  try {
    // The connection opens; its first request (the broker's API versions) is never answered.
    await expect(frozen.connect()).rejects.toThrow(/timed out/);
  } finally {
    await frozen.disconnect();
    await silent.close();
  }
});

// kafkajs 2.2.4 re-arms a 1 ms timer after every check of a connection's request queue, whether or not a
// request waits (upstream issues #1556 and #1704, unreleased): every idle service then wakes about a
// thousand times a second per broker connection, which measured as 40 ms of CPU a second per process.
// patches/kafkajs+2.2.4.patch, applied by `npm install`, checks again only when a request waits or a
// throttle ends. This counts the timers an idle, connected client starts.
import { createHook } from 'node:async_hooks';
import type { Producer } from 'kafkajs';
import { closeKafka, testKafka } from '../support/kafka';

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

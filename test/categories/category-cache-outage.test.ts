import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeDb, TEST_API_KEY } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { buildCategory, categoryCacheKey, getCategory, insertCategory, RedisServer, type CategoryGateway } from './category-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let redisServer: RedisServer;
let stack: CategoryGateway;

beforeAll(async () => {
  redisServer = await RedisServer.start();
  stack = await startStack({ mode: 'gateway', env: { REDIS_URL: redisServer.url } });
});
afterAll(async () => {
  await stack?.stop();
  await redisServer?.stop();
  await closeKafka();
  await closeDb();
});

function redisClient(): Redis {
  const client = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return client;
}

const outageWarnings = () => stack.logs.filter((line) => line.msg.startsWith('category cache unavailable'));
const recoveries = () => stack.logs.filter((line) => line.msg === 'category cache available again');

test('when Redis stops, reads are served from PostgreSQL, the outage is logged once, and Redis is used again when it returns', async () => {
  const category = await insertCategory(buildCategory());
  const key = categoryCacheKey(stack.prefix, category.id);
  const before = redisClient();
  expect((await getCategory(stack.url, category.id, TEST_API_KEY)).status).toBe(200);
  expect(await eventually(() => before.exists(key).then((count) => count === 1), 10_000, { what: 'the cache entry' })).toBe(true);
  before.disconnect();

  // Counted before the stop: the client may report the lost connection before the next read does.
  const warningsBefore = outageWarnings().length;
  await redisServer.stop();
  // How fast a read falls back is the bench's business; here, that each one is answered from PostgreSQL.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const res = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(category);
  }
  expect((await getCategory(stack.url, randomUUID(), TEST_API_KEY)).status).toBe(404);
  expect(outageWarnings().length - warningsBefore).toBe(1);
  expect(outageWarnings().at(-1)?.level).toBe(40);

  await redisServer.restart();
  const after = redisClient();
  // The restarted server is empty: an entry appears only once the gateway writes to it again.
  await eventually(
    async () => {
      expect((await getCategory(stack.url, category.id, TEST_API_KEY)).status).toBe(200);
      return (await after.get(key)) !== null;
    },
    15_000,
    { what: 'the gateway to fill the restarted Redis' },
  );
  expect(JSON.parse((await after.get(key))!)).toEqual({ data: category });
  expect(recoveries().length).toBe(1);
  after.disconnect();

  // A second outage is a new one, logged once again.
  await redisServer.stop();
  expect((await getCategory(stack.url, category.id, TEST_API_KEY)).status).toBe(200);
  expect((await getCategory(stack.url, category.id, TEST_API_KEY)).status).toBe(200);
  expect(outageWarnings().length - warningsBefore).toBe(2);
  await redisServer.restart();
});

test('when Redis is slower than the command timeout, reads are served from PostgreSQL without waiting for it', async () => {
  const category = await insertCategory(buildCategory());
  const client = redisClient();
  await eventually(
    async () => {
      await getCategory(stack.url, category.id, TEST_API_KEY);
      return (await client.exists(categoryCacheKey(stack.prefix, category.id))) === 1;
    },
    15_000,
    { what: 'the gateway to use Redis' },
  );

  const blocker = new Redis(redisServer.url);
  let awake = false;
  const sleeping = blocker.call('DEBUG', 'SLEEP', '3').then(() => (awake = true));
  // Redis is asleep once a ping of another connection goes unanswered.
  const probe = new Redis(redisServer.url, { commandTimeout: 200, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  await eventually(
    async () =>
      (await probe.ping().then(
        () => false,
        () => true,
      )) && !awake,
    10_000,
    { what: 'Redis to be asleep' },
  );
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const res = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(category);
  }
  // Every read was answered while Redis still slept: none waited for it.
  expect(awake).toBe(false);
  await sleeping;
  probe.disconnect();
  blocker.disconnect();
  client.disconnect();
});

test('a gateway started while Redis is down serves, says so in /readyz, and uses Redis once it answers', async () => {
  const late = await RedisServer.reserve();
  const gateway = await startStack({ mode: 'gateway', env: { REDIS_URL: late.url } });
  try {
    expect(gateway.logs.filter((line) => line.level === 40 && line.msg.startsWith('Redis is unreachable'))).toHaveLength(1);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'degraded', checks: { postgres: 'up', redis: 'down', kafka: 'up' } });
    const category = await insertCategory(buildCategory());
    const read = await getCategory(gateway.url, category.id, TEST_API_KEY);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(category);

    await late.restart();
    await eventually(async () => ((await (await fetch(`${gateway.url}/readyz`)).json()) as { status: string }).status === 'ready', 20_000, {
      what: 'readyz to say ready',
    });
    const key = categoryCacheKey(gateway.prefix, category.id);
    await eventually(
      async () => {
        await getCategory(gateway.url, category.id, TEST_API_KEY);
        const client = new Redis(late.url, { maxRetriesPerRequest: 1 });
        client.on('error', () => undefined);
        try {
          return (await client.exists(key)) === 1;
        } finally {
          client.disconnect();
        }
      },
      20_000,
      { what: 'a read to fill the cache of the Redis that came up' },
    );
  } finally {
    await gateway.stop();
    await late.stop();
  }
});

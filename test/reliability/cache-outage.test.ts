// Fault 4: Redis, the category cache, stops while a gateway process serves category reads, and comes back
// empty. Reads keep answering 200 from PostgreSQL without waiting on Redis, and the gateway fills and
// reads the cache again once Redis answers. The Redis server is the test's own; the shared one on 6379
// is never touched.
import { Redis } from 'ioredis';
import { closeDb, TEST_API_KEY, baseEnv, provisionedPrefix } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { buildCategory, CATEGORY_PATH, insertCategory, RedisServer, type CategoryFixture } from '../categories/category-support';
import { eventually } from '../support/eventually';

const REDIS_COMMAND_TIMEOUT_MS = 500;

let redisServer: RedisServer;
let gateway: ServiceProcess;
let prefix: string;
const categories: CategoryFixture[] = [];

beforeAll(async () => {
  redisServer = await RedisServer.start();
  prefix = await provisionedPrefix('cache-outage');
  // Every read after Redis returns must be a hit: on a loaded machine a lookup can take the running
  // Redis past the 50 ms default, and one that does skips the cache for a second (see operations.md).
  // A stopped Redis still fails each lookup at once: its connection is closed, not slow.
  gateway = await spawnService(
    'gateway',
    baseEnv(prefix, { REDIS_URL: redisServer.url, REDIS_COMMAND_TIMEOUT_MS: String(REDIS_COMMAND_TIMEOUT_MS) }),
  );
  for (let index = 0; index < 20; index += 1) categories.push(await insertCategory(buildCategory()));
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await redisServer?.stop();
  await closeKafka();
  await closeDb();
});

interface Phase {
  sent: number;
  ok: number;
  wrongBody: number;
  p50Ms: number;
  maxMs: number;
}

/** Reads every category `rounds` times, ten at a time, and checks each body against the stored row. */
async function readAll(rounds: number): Promise<Phase> {
  const latencies: number[] = [];
  let ok = 0;
  let wrongBody = 0;
  for (let round = 0; round < rounds; round += 1) {
    for (let start = 0; start < categories.length; start += 10) {
      await Promise.all(
        categories.slice(start, start + 10).map(async (category) => {
          const started = performance.now();
          const response = await fetch(`${gateway.url}${CATEGORY_PATH}/${category.id}`, { headers: { authorization: TEST_API_KEY } });
          const body = (await response.json()) as { data?: unknown };
          latencies.push(performance.now() - started);
          if (response.status === 200) ok += 1;
          if (JSON.stringify(body.data) !== JSON.stringify(category)) wrongBody += 1;
        }),
      );
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    sent: latencies.length,
    ok,
    wrongBody,
    p50Ms: Math.round(latencies[Math.floor(latencies.length / 2)]!),
    maxMs: Math.round(latencies.at(-1)!),
  };
}

async function cacheLookups(result: 'hit' | 'miss' | 'error'): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith('fleet_category_cache_lookups_total{') && entry.includes(`result="${result}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function cachedKeys(): Promise<number> {
  const client = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    return (await client.keys(`${prefix}:*`)).length;
  } finally {
    client.disconnect();
  }
}

async function readiness(): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const response = await fetch(`${gateway.url}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
}

test('Redis stopped under category reads: every read answers 200 from PostgreSQL, and Redis is used again once it returns', async () => {
  expect(await readiness()).toEqual({ status: 200, body: expect.objectContaining({ status: 'ready' }) });
  const before = await readAll(10);
  expect(await cachedKeys()).toBe(categories.length);
  const hitsBefore = await cacheLookups('hit');

  await redisServer.stop();
  const errorsBefore = await cacheLookups('error');
  const during = await readAll(10);
  const errorsDuring = (await cacheLookups('error')) - errorsBefore;
  // The instance still serves everything, so it stays in service and says what is missing.
  expect(await readiness()).toEqual({
    status: 200,
    body: expect.objectContaining({ status: 'degraded', checks: expect.objectContaining({ redis: 'down' }) }),
  });

  await redisServer.restart();
  // The restarted Redis is empty: the gateway reconnects and fills it as it reads.
  await eventually(
    async () => {
      await readAll(1);
      return (await cachedKeys()) === categories.length;
    },
    20_000,
    { what: 'the gateway to fill the restarted Redis', intervalMs: 200 },
  );
  const hitsAfterRefill = await cacheLookups('hit');
  const after = await readAll(10);
  const hitsAfter = (await cacheLookups('hit')) - hitsAfterRefill;

  const phases = { before, during, after };
  process.stdout.write(
    `fault-figures ${JSON.stringify({
      fault: 'Redis stopped and restarted empty under category reads',
      sent: before.sent + during.sent + after.sent,
      ok: before.ok + during.ok + after.ok,
      wrongBodies: before.wrongBody + during.wrongBody + after.wrongBody,
      phases,
      cacheHitsBefore: hitsBefore,
      cacheErrorsWhileDown: errorsDuring,
      cacheHitsAfterReturn: hitsAfter,
    })}\n`,
  );

  for (const phase of [before, during, after])
    expect({ ok: phase.ok, wrongBody: phase.wrongBody }).toEqual({ ok: phase.sent, wrongBody: 0 });
  // Each read skips the absent Redis at once: one that waited on it would take its command timeout.
  expect(during.maxMs).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
  expect(hitsBefore).toBeGreaterThan(0);
  expect(hitsAfter).toBe(after.sent);
  expect(gateway.isRunning()).toBe(true);
}, 120_000);

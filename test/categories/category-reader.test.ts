import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createRedis } from '../../shared/write-path/src/redis';
import { createCategoryCache } from '../../services/gateway/src/categories/category-cache';
import { categoryStore } from '../../services/gateway/src/categories/category-store';
import { createCategoryReader } from '../../services/gateway/src/categories/get-category';
import { testServers, uniquePrefix, closeDb } from '../support/harness';
import { buildCategory, categoryCacheKey, insertCategory } from './category-support';
import { eventually } from '../support/eventually';

const prefix = uniquePrefix('category-reader');
let pool: Pool;
let redis: Redis;
let checkouts = 0;
/**
 * Longer than the gateway's 50 ms: these tests are about what the reader asks of PostgreSQL and what it
 * caches, and on a busy CI host one of 25 concurrent GETs outlasted 50 ms, which opened the cache's
 * breaker and left the not-found entry unwritten, as it should be while Redis is slow.
 */
const REDIS_COMMAND_TIMEOUT_MS = 2000;

beforeAll(async () => {
  pool = new Pool({ connectionString: testServers().databaseUrl, max: 5 });
  pool.on('acquire', () => {
    checkouts += 1;
  });
  redis = createRedis(testServers().redisUrl, REDIS_COMMAND_TIMEOUT_MS);
  await redis.connect();
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await pool.end();
  await closeDb();
});

function reader() {
  const cache = createCategoryCache({
    redis,
    prefix: `${prefix}:`,
    ttlSeconds: 300,
    notFoundTtlSeconds: 30,
    logger: pino({ level: 'silent' }),
  });
  return createCategoryReader({ categories: categoryStore(pool), cache });
}

test('concurrent misses for one id make a single database query and all get the same body', async () => {
  const category = await insertCategory(buildCategory());
  const categories = reader();
  checkouts = 0;
  const bodies = await Promise.all(Array.from({ length: 25 }, () => categories.read(category.id)));
  expect(checkouts).toBe(1);
  expect(new Set(bodies.map(String)).size).toBe(1);
  expect(JSON.parse(String(bodies[0]))).toEqual({ data: category });
});

test('concurrent misses for an unknown id make a single query, all fail with 404, and the id is cached as not found', async () => {
  const id = randomUUID();
  const categories = reader();
  checkouts = 0;
  const outcomes = await Promise.allSettled(Array.from({ length: 25 }, () => categories.read(id)));
  expect(checkouts).toBe(1);
  for (const outcome of outcomes) {
    expect(outcome.status).toBe('rejected');
    expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'E-N1/1-01', category: 'notFound' });
  }
  await expect(redis.get(categoryCacheKey(`${prefix}`, id))).resolves.toBe('not-found');
});

test('once cached, reads make no database query', async () => {
  const category = await insertCategory(buildCategory());
  const categories = reader();
  await categories.read(category.id);
  // The cache is filled after the answer: wait until it holds the category.
  await eventually(async () => (await redis.exists(categoryCacheKey(`${prefix}`, category.id))) === 1, 10_000, {
    what: 'the category to be cached',
  });
  checkouts = 0;
  for (let index = 0; index < 10; index += 1) await categories.read(category.id);
  expect(checkouts).toBe(0);
});

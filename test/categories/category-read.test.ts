import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { importCategories } from '@fleet/gateway';
import { categoryEvictor } from '../../services/gateway/src/categories/category-cache';
import { categoryStore } from '../../services/gateway/src/categories/category-store';
import { closeDb, db, signToken, TEST_API_KEY, testServers } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { buildCategory, CATEGORY_PATH, categoryCacheKey, getCategory, insertCategory, type CategoryGateway } from './category-support';
import { runApiKeyCli } from '../../services/gateway/src/cli/api-key';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let stack: CategoryGateway;
let redis: Redis;

beforeAll(async () => {
  stack = await startStack({ mode: 'gateway', env: { API_KEY_REFRESH_SECONDS: '1' }, level: 'trace' });
  redis = new Redis(testServers().redisUrl);
});
afterAll(async () => {
  await stack?.stop();
  const keys = await redis.keys(`${stack.prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await closeKafka();
  await closeDb();
});

describe('authentication', () => {
  test('when no Authorization header is sent, responds 401 E-A1/1-01 whatever the id', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '%zz']) {
      const res = await getCategory(stack.url, id);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ code: 'E-A1/1-01', message: 'A valid API key is required' });
    }
  });

  test('when the key is unknown, responds 401 E-A1/1-01', async () => {
    const res = await getCategory(stack.url, randomUUID(), 'not-a-known-key');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('E-A1/1-01');
  });

  test('when a valid JWT is sent instead of a key, raw or as a bearer token, responds 401', async () => {
    const token = await signToken();
    for (const header of [token, `Bearer ${token}`, `Bearer ${TEST_API_KEY}`, `${TEST_API_KEY} `.repeat(2)]) {
      const res = await getCategory(stack.url, randomUUID(), header);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'E-A1/1-01', message: 'A valid API key is required' });
    }
  });

  test('a key created with the CLI is accepted, and refused once revoked', async () => {
    const category = await insertCategory(buildCategory());
    const label = `read-test-${randomUUID()}`;
    const out: string[] = [];
    const io = { env: { DATABASE_URL: testServers().databaseUrl }, out: (line: string) => out.push(line), err: () => undefined };
    expect(await runApiKeyCli(['create', label], io)).toBe(0);
    const key = out[0]!;

    const accepted = await eventually(
      async () => {
        const res = await getCategory(stack.url, category.id, key);
        return res.status === 200 ? res : undefined;
      },
      10_000,
      { what: 'the created key to be accepted' },
    );
    expect(accepted.body.data.id).toBe(category.id);

    expect(await runApiKeyCli(['revoke', label], io)).toBe(0);
    const refused = await eventually(
      async () => {
        const res = await getCategory(stack.url, category.id, key);
        return res.status === 401 ? res : undefined;
      },
      10_000,
      { what: 'the revoked key to be refused' },
    );
    expect(refused.body.code).toBe('E-A1/1-01');
  });

  test('keys, accepted or refused, never appear in the log', async () => {
    const category = await insertCategory(buildCategory());
    await getCategory(stack.url, category.id, TEST_API_KEY);
    await getCategory(stack.url, category.id, 'a-wrong-key-that-must-not-be-logged');
    const log = stack.rawLogs.join('\n');
    expect(log).not.toContain(TEST_API_KEY);
    expect(log).not.toContain('a-wrong-key-that-must-not-be-logged');
  });
});

describe('reading a category', () => {
  test('an existing category responds 200 with its fields, temperatures as JSON numbers', async () => {
    const category = await insertCategory(buildCategory({ min_temperature: -18.5, max_temperature: 4 }));
    const res = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ data: { id: category.id, name: category.name, min_temperature: -18.5, max_temperature: 4 } });
    expect(res.text).toBe(`{"data":{"id":"${category.id}","name":"${category.name}","min_temperature":-18.5,"max_temperature":4}}`);
  });

  test('a category without temperatures responds 200 with null temperatures', async () => {
    const category = await insertCategory(buildCategory({ min_temperature: null, max_temperature: null }));
    const res = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: category.id, name: category.name, min_temperature: null, max_temperature: null });
  });

  test('an id in upper case finds the category and answers with the stored id', async () => {
    const category = await insertCategory(buildCategory());
    const res = await getCategory(stack.url, category.id.toUpperCase(), TEST_API_KEY);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(category.id);
  });

  test('an unknown id responds 404 E-N1/1-01', async () => {
    const res = await getCategory(stack.url, randomUUID(), TEST_API_KEY);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'E-N1/1-01', message: 'Product category not found' });
  });

  test('an id that is not a UUID responds 400 with the fixed body of validation issues, without a code', async () => {
    const res = await getCategory(stack.url, 'not-a-uuid', TEST_API_KEY);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: { id: ['Invalid uuid'] },
      errors_v2: {
        formatted: { _errors: [], id: { _errors: ['Invalid uuid'] } },
        issues: [{ code: 'invalid_string', expected: 'uuid', message: 'Invalid uuid', path: ['id'], received: 'not-a-uuid' }],
      },
      message: 'Invalid product category id: it must be a UUID',
    });
  });

  test('an id that cannot be percent-decoded responds 400 with the section 7.1 body, not 500', async () => {
    const res = await getCategory(stack.url, '%zz', TEST_API_KEY);
    expect(res.status).toBe(400);
    expect(res.body.errors_v2.issues).toEqual([
      { code: 'invalid_string', expected: 'uuid', message: 'Invalid uuid', path: ['id'], received: '%zz' },
    ]);
  });

  test('a path under the category route with no id or extra segments responds JSON 404 E-N1/1-02', async () => {
    for (const path of [`${CATEGORY_PATH}/`, `${CATEGORY_PATH}/${randomUUID()}/extra`]) {
      const response = await fetch(`${stack.url}${path}`, { headers: { authorization: TEST_API_KEY } });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ code: 'E-N1/1-02', message: 'No such route' });
    }
  });
});

describe('the cache', () => {
  test('a read stores the response body in Redis with the category TTL, and later reads are answered from it', async () => {
    const category = await insertCategory(buildCategory());
    const first = await getCategory(stack.url, category.id, TEST_API_KEY);
    const key = categoryCacheKey(stack.prefix, category.id);
    // The cache is written after the answer, best effort within REDIS_COMMAND_TIMEOUT_MS (50 ms): on a
    // loaded machine one write can miss it, and the next read writes it again, as it would in service.
    const cached = await eventually(
      async () => {
        const value = await redis.get(key);
        if (value === null) await getCategory(stack.url, category.id, TEST_API_KEY);
        return value ?? undefined;
      },
      10_000,
      { what: 'the cache entry' },
    );
    expect(cached).toBe(first.text);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(290);
    expect(ttl).toBeLessThanOrEqual(300);

    // A hit is proven by a body PostgreSQL does not hold.
    const planted = JSON.stringify({ data: { ...first.body.data, name: 'from the cache' } });
    await redis.set(key, planted, 'KEEPTTL');
    const second = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(second.status).toBe(200);
    expect(second.text).toBe(planted);
  });

  test('an unknown id is cached as not found with the short TTL, and a hit on it responds 404', async () => {
    const id = randomUUID();
    expect((await getCategory(stack.url, id, TEST_API_KEY)).status).toBe(404);
    const key = categoryCacheKey(stack.prefix, id);
    expect(await eventually(() => redis.get(key).then((value) => value ?? undefined), 10_000, { what: 'the not-found entry' })).toBe(
      'not-found',
    );
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(20);
    expect(ttl).toBeLessThanOrEqual(30);

    // The row appears without an import: the not-found entry still answers until it expires.
    await insertCategory(buildCategory({ id }));
    expect((await getCategory(stack.url, id, TEST_API_KEY)).status).toBe(404);
  });

  test('a body from the cache is byte for byte the body from PostgreSQL', async () => {
    const category = await insertCategory(buildCategory({ name: 'Vaccines "2-8" — ünïcode', min_temperature: 2.25 }));
    const fromDatabase = await getCategory(stack.url, category.id, TEST_API_KEY);
    await eventually(() => redis.exists(categoryCacheKey(stack.prefix, category.id)).then((count) => count === 1), 10_000, {
      what: 'the cache entry',
    });
    const fromCache = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(fromCache.text).toBe(fromDatabase.text);
    expect(fromCache.headers.get('content-length')).toBe(fromDatabase.headers.get('content-length'));
    expect(fromCache.body.data.name).toBe('Vaccines "2-8" — ünïcode');
  });

  test('an import refreshes a cached category and a category cached as not found', async () => {
    const category = await insertCategory(buildCategory());
    const missing = randomUUID();
    await getCategory(stack.url, category.id, TEST_API_KEY);
    await getCategory(stack.url, missing, TEST_API_KEY);
    await eventually(
      () => redis.exists(categoryCacheKey(stack.prefix, category.id), categoryCacheKey(stack.prefix, missing)).then((count) => count === 2),
      10_000,
      { what: 'both cache entries' },
    );

    const result = await importCategories({ store: categoryStore(db()), cache: categoryEvictor(redis, `${stack.prefix}:`) }, [
      { ...category, name: 'Renamed by import', max_temperature: '9.5' },
      { id: missing, name: 'Imported', min_temperature: '', max_temperature: '' },
    ]);
    expect(result).toEqual({ total: 2, changed: expect.arrayContaining([category.id, missing]), cacheEvicted: true });

    const renamed = await getCategory(stack.url, category.id, TEST_API_KEY);
    expect(renamed.body.data).toEqual({ ...category, name: 'Renamed by import', max_temperature: 9.5 });
    const imported = await getCategory(stack.url, missing, TEST_API_KEY);
    expect(imported.status).toBe(200);
    expect(imported.body.data).toEqual({ id: missing, name: 'Imported', min_temperature: null, max_temperature: null });
  });

  test('an import of rows already stored as given changes nothing and evicts nothing', async () => {
    const category = await insertCategory(buildCategory());
    await getCategory(stack.url, category.id, TEST_API_KEY);
    const key = categoryCacheKey(stack.prefix, category.id);
    await eventually(() => redis.exists(key).then((count) => count === 1), 10_000, { what: 'the cache entry' });
    const result = await importCategories({ store: categoryStore(db()), cache: categoryEvictor(redis, `${stack.prefix}:`) }, [category]);
    expect(result.changed).toEqual([]);
    expect(await redis.exists(key)).toBe(1);
  });
});

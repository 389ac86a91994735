import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { closeDb, db, testServers, uniquePrefix } from '../support/harness';
import { runApiKeyCli } from '../../services/gateway/src/cli/api-key';
import { runCategoriesCli } from '../../services/gateway/src/cli/categories';
import { freePort } from '../../deploy/local/src/local-ports';
import { buildCategory, categoryCacheKey, insertCategory } from './category-support';

let dir: string;
let redis: Redis;
const prefix = uniquePrefix('category-cli');

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'category-cli-'));
  redis = new Redis(testServers().redisUrl);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await closeDb();
});

function cli(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      env: { DATABASE_URL: testServers().databaseUrl, REDIS_URL: testServers().redisUrl, CACHE_KEY_PREFIX: `${prefix}:`, ...env },
      out: (line: string) => out.push(line),
      err: (line: string) => err.push(line),
    },
  };
}

async function keyRows(label: string) {
  const result = await db().query('SELECT * FROM api_keys WHERE label = $1 ORDER BY id', [label]);
  return result.rows;
}

describe('npm run api-key', () => {
  test('create prints a new 32-byte base64url key once and stores only its SHA-256 hash', async () => {
    const label = `cli-${randomUUID()}`;
    const run = cli();
    expect(await runApiKeyCli(['create', label], run.io)).toBe(0);
    expect(run.out).toHaveLength(1);
    const key = run.out[0]!;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key, 'base64url')).toHaveLength(32);
    expect(run.err.join('\n')).not.toContain(key);

    const [row, ...others] = await keyRows(label);
    expect(others).toEqual([]);
    expect(row.key_hash).toEqual(createHash('sha256').update(key).digest());
    expect(row.revoked_at).toBeNull();
    expect(JSON.stringify(row)).not.toContain(key);
  });

  test('create with the label of an active key exits 1 and stores nothing', async () => {
    const label = `cli-${randomUUID()}`;
    expect(await runApiKeyCli(['create', label], cli().io)).toBe(0);
    const second = cli();
    expect(await runApiKeyCli(['create', label], second.io)).toBe(1);
    expect(second.out).toEqual([]);
    expect(second.err.join('\n')).toContain('already labelled');
    expect(await keyRows(label)).toHaveLength(1);
  });

  test('revoke marks the active key revoked, frees the label, and a second revoke exits 1', async () => {
    const label = `cli-${randomUUID()}`;
    expect(await runApiKeyCli(['create', label], cli().io)).toBe(0);
    expect(await runApiKeyCli(['revoke', label], cli().io)).toBe(0);
    expect((await keyRows(label))[0].revoked_at).toBeInstanceOf(Date);
    const again = cli();
    expect(await runApiKeyCli(['revoke', label], again.io)).toBe(1);
    expect(again.err.join('\n')).toContain('no active API key');
    expect(await runApiKeyCli(['create', label], cli().io)).toBe(0);
    expect(await keyRows(label)).toHaveLength(2);
  });

  test('list prints labels and states, never keys or hashes', async () => {
    const label = `cli-${randomUUID()}`;
    const created = cli();
    await runApiKeyCli(['create', label], created.io);
    const listed = cli();
    expect(await runApiKeyCli(['list'], listed.io)).toBe(0);
    const line = listed.out.find((entry) => entry.startsWith(`${label}\t`));
    expect(line).toMatch(/\tcreated \d{4}-.*\tactive$/);
    expect(listed.out.join('\n')).not.toContain(created.out[0]);
  });

  test.each([[[]], [['create']], [['create', '   ']], [['rotate', 'x']], [['list', 'extra']]])(
    'usage %j exits 2 with the usage',
    async (args) => {
      const run = cli();
      expect(await runApiKeyCli(args, run.io)).toBe(2);
      expect(run.err.join('\n')).toContain('usage: npm run api-key');
    },
  );
});

describe('npm run categories -- import', () => {
  test('the shipped development categories import, and importing them again changes nothing', async () => {
    const seed = path.resolve(__dirname, '../../deploy/local/seed/categories.json');
    const first = cli();
    expect(await runCategoriesCli(['import', seed], first.io)).toBe(0);
    const again = cli();
    expect(await runCategoriesCli(['import', seed], again.io)).toBe(0);
    expect(again.err.join('\n')).toMatch(/imported \d+ categories: 0 inserted or changed/);
    const stored = await db().query("SELECT name FROM product_categories WHERE name = 'Frozen food'");
    expect(stored.rowCount).toBe(1);
  });

  test('a CSV file upserts by id, with quoted fields and empty temperatures, and evicts the changed ids from the cache', async () => {
    const existing = await insertCategory(buildCategory());
    const added = randomUUID();
    const untouched = await insertCategory(buildCategory());
    for (const id of [existing.id, added, untouched.id]) await redis.set(categoryCacheKey(prefix, id), 'cached', 'EX', 60);
    const file = path.join(dir, 'categories.csv');
    await writeFile(
      file,
      [
        'id,name,min_temperature,max_temperature',
        `${existing.id},"Ice cream, premium",-30,-20`,
        `${added.toUpperCase()},"Said ""fresh""",,`,
        `${untouched.id},${untouched.name},${untouched.min_temperature},${untouched.max_temperature}`,
        '',
      ].join('\r\n'),
    );
    const run = cli();
    expect(await runCategoriesCli(['import', file], run.io)).toBe(0);
    expect(run.err.join('\n')).toContain('imported 3 categories: 2 inserted or changed');

    const rows = await db().query(
      'SELECT id, name, min_temperature, max_temperature FROM product_categories WHERE id = ANY($1) ORDER BY name',
      [[existing.id, added]],
    );
    expect(rows.rows).toEqual([
      { id: existing.id, name: 'Ice cream, premium', min_temperature: '-30', max_temperature: '-20' },
      { id: added, name: 'Said "fresh"', min_temperature: null, max_temperature: null },
    ]);
    expect(await redis.exists(categoryCacheKey(prefix, existing.id))).toBe(0);
    expect(await redis.exists(categoryCacheKey(prefix, added))).toBe(0);
    expect(await redis.get(categoryCacheKey(prefix, untouched.id))).toBe('cached');
  });

  test('a file with invalid rows imports nothing and lists every problem with its row', async () => {
    const valid = buildCategory();
    const file = path.join(dir, 'invalid.json');
    await writeFile(
      file,
      JSON.stringify([
        valid,
        { id: 'nope', name: '', min_temperature: 'cold', max_temperature: 1 },
        { ...buildCategory(), min_temperature: 10, max_temperature: 2 },
        { ...valid, name: 'duplicate' },
      ]),
    );
    const run = cli();
    expect(await runCategoriesCli(['import', file], run.io)).toBe(1);
    const report = run.err.join('\n');
    expect(report).toContain('row 2: id: Invalid uuid');
    expect(report).toContain('row 2: name: must not be empty');
    expect(report).toContain('row 2: min_temperature: must be a number or empty');
    expect(report).toContain('row 3: min_temperature: must not be above max_temperature');
    expect(report).toContain(`row 4: id: ${valid.id} is already given in row 1`);
    expect((await db().query('SELECT 1 FROM product_categories WHERE id = $1', [valid.id])).rowCount).toBe(0);
  });

  test('when Redis is unreachable the import still upserts and warns that cached copies stay until their TTL', async () => {
    const category = buildCategory();
    const file = path.join(dir, 'no-redis.json');
    await writeFile(file, JSON.stringify([category]));
    const run = cli({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(await runCategoriesCli(['import', file], run.io)).toBe(0);
    expect(run.err.join('\n')).toContain('Redis was unreachable');
    expect((await db().query('SELECT 1 FROM product_categories WHERE id = $1', [category.id])).rowCount).toBe(1);
  });

  test('a missing file, another extension, or no file exits non-zero with a message', async () => {
    const missing = cli();
    expect(await runCategoriesCli(['import', path.join(dir, 'absent.json')], missing.io)).toBe(1);
    expect(missing.err.join('\n')).toContain('ENOENT');
    const other = cli();
    expect(await runCategoriesCli(['import', path.join(dir, 'categories.xml')], other.io)).toBe(1);
    expect(other.err.join('\n')).toContain('expected a .json or .csv file');
    const none = cli();
    expect(await runCategoriesCli(['import'], none.io)).toBe(2);
    expect(none.err.join('\n')).toContain('usage: npm run categories');
  });
});

// `npm run categories -- import <file.json|file.csv>`: upserts product categories by id into
// DATABASE_URL and evicts the changed ids from the gateway's cache in REDIS_URL (CACHE_KEY_PREFIX).
// An unreachable Redis does not stop the import: stale entries then expire within the cache TTL.
import { Redis } from 'ioredis';
import { z } from 'zod';
import { loadConfig, postgresUrl, redisUrl } from '@fleet/shared/config';
import { createPool } from '@fleet/shared/db/pool';
import { categoryEvictor } from '../categories/category-cache';
import { readCategoryFile } from '../categories/category-file';
import { categoryStore } from '../categories/category-store';
import { CategoryImportError, importCategories } from '../categories/import-categories';
import { cacheKeyPrefix } from '@fleet/write-path/write-path-config';
import { positionals, runAsProgram, type CliIo } from './cli-io';

const USAGE = 'usage: npm run categories -- import <file.json|file.csv>';

const cliEnv = z.object({ DATABASE_URL: postgresUrl, REDIS_URL: redisUrl, CACHE_KEY_PREFIX: cacheKeyPrefix });

async function connectRedis(url: string): Promise<Redis | undefined> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return redis;
  } catch {
    // A connection that failed is closed already: disconnecting it again would only hold the process
    // for ioredis's disconnect timeout (2 s) before it exits.
    if (redis.status !== 'end') redis.disconnect();
    return undefined;
  }
}

export async function runCategoriesCli(args: readonly string[], io: CliIo): Promise<number> {
  const [command, file, ...extra] = positionals(args) ?? [];
  if (command !== 'import' || !file || extra.length > 0) {
    io.err(USAGE);
    return 2;
  }
  const config = loadConfig(cliEnv, io.env);
  let rows: unknown[];
  try {
    rows = await readCategoryFile(file);
  } catch (error) {
    io.err((error as Error).message);
    return 1;
  }
  const pool = createPool({ connectionString: config.DATABASE_URL, max: 1, applicationName: 'fleet-categories-cli' });
  const redis = await connectRedis(config.REDIS_URL);
  try {
    const result = await importCategories(
      { store: categoryStore(pool), cache: redis && categoryEvictor(redis, config.CACHE_KEY_PREFIX) },
      rows,
    );
    io.err(`imported ${result.total} categories: ${result.changed.length} inserted or changed`);
    if (!result.cacheEvicted && result.changed.length > 0) {
      io.err('warning: Redis was unreachable, so cached copies of the changed categories stay until their TTL ends');
    }
    return 0;
  } catch (error) {
    if (error instanceof CategoryImportError) {
      io.err(`${file}: nothing imported, ${error.problems.length} problem(s):`);
      for (const problem of error.problems) io.err(`  ${problem}`);
    } else {
      io.err(`import failed: ${(error as Error).message}`);
    }
    return 1;
  } finally {
    await Promise.allSettled([pool.end(), redis?.quit()]);
  }
}

if (require.main === module) runAsProgram(runCategoriesCli);

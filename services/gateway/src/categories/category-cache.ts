// The Redis side of the cache-aside category read. A key holds the response body ready to send, or a
// marker for an id known not to exist. Redis is optional: while it is away or slow every call
// resolves as a miss at once, the outage is logged once, and Redis is used again when it answers.
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import type { Redis } from 'ioredis';
import type { Logger } from '@fleet/shared/logger';
import type { CategoryEvictor } from './import-categories';
import type { CacheLookupCounter } from '../metrics';

export const NOT_FOUND = Symbol('category not found');
/** What a not-found entry holds; never valid JSON, so it cannot be taken for a body. */
export const NOT_FOUND_MARKER = 'not-found';
const notFoundMarker = Buffer.from(NOT_FOUND_MARKER);

/** After a failed command, how long to serve from PostgreSQL before trying Redis again (the circuit
 * breaker's open time), so a slow Redis costs one command timeout per pause rather than one per request. */
const PAUSE_AFTER_FAILURE_MS = 1000;

export function categoryCacheKey(prefix: string, id: string): string {
  return `${prefix}category:${id}`;
}

export type CachedCategory = Buffer | typeof NOT_FOUND | undefined;

export interface CategoryCache {
  /** A body, NOT_FOUND, or undefined on a miss or while Redis is unavailable; never rejects. */
  get(id: string): Promise<CachedCategory>;
  /** Stores a body, or a not-found entry for null; fire and forget. */
  set(id: string, body: string | null): void;
}

export interface CategoryCacheOptions {
  redis: Redis;
  prefix: string;
  ttlSeconds: number;
  notFoundTtlSeconds: number;
  logger: Logger;
  /** Counts each get() as a hit (a body or a not-found entry), a miss, or an error (Redis unavailable). */
  lookups?: CacheLookupCounter;
}

const HIT = { result: 'hit' } as const;
const MISS = { result: 'miss' } as const;
const ERROR = { result: 'error' } as const;

export function createCategoryCache(options: CategoryCacheOptions): CategoryCache {
  const { redis, prefix, ttlSeconds, notFoundTtlSeconds, logger, lookups } = options;
  let unavailable = false;
  const breaker = circuitBreaker(handleAll, { halfOpenAfter: PAUSE_AFTER_FAILURE_MS, breaker: new ConsecutiveBreaker(1) });

  const markUnavailable = (reason: string) => {
    if (unavailable) return;
    unavailable = true;
    logger.warn({ reason }, 'category cache unavailable: serving product categories from PostgreSQL');
  };
  const markAvailable = () => {
    if (!unavailable) return;
    unavailable = false;
    logger.info('category cache available again');
  };
  /** A command refused by the open breaker was never sent: nothing new to report. */
  const onFailure = (error: Error) => {
    if (!(error instanceof BrokenCircuitError)) markUnavailable(error.message);
    return undefined;
  };
  const connected = (): boolean => {
    if (redis.status === 'ready') return true;
    markUnavailable(`redis connection is ${redis.status}`);
    return false;
  };
  const onValue = (value: Buffer | null): CachedCategory => {
    markAvailable();
    lookups?.inc(value === null ? MISS : HIT);
    if (value === null) return undefined;
    return value.equals(notFoundMarker) ? NOT_FOUND : value;
  };
  const onLookupFailure = (error: Error) => {
    lookups?.inc(ERROR);
    return onFailure(error);
  };

  return {
    get(id) {
      if (!connected()) {
        lookups?.inc(ERROR);
        return Promise.resolve(undefined);
      }
      return breaker.execute(() => redis.getBuffer(categoryCacheKey(prefix, id))).then(onValue, onLookupFailure);
    },
    set(id, body) {
      if (!connected()) return;
      const key = categoryCacheKey(prefix, id);
      const stored = breaker.execute(() =>
        body === null ? redis.set(key, NOT_FOUND_MARKER, 'EX', notFoundTtlSeconds) : redis.set(key, body, 'EX', ttlSeconds),
      );
      stored.then(markAvailable, onFailure);
    },
  };
}

/** Drops cached entries, e.g. after an import changed the categories. */
export async function evictCategories(redis: Redis, prefix: string, ids: readonly string[]): Promise<void> {
  const BATCH = 500;
  for (let start = 0; start < ids.length; start += BATCH) {
    await redis.del(...ids.slice(start, start + BATCH).map((id) => categoryCacheKey(prefix, id)));
  }
}

/** The import's evictor over this Redis. */
export function categoryEvictor(redis: Redis, prefix: string): CategoryEvictor {
  return { evict: (ids) => evictCategories(redis, prefix, ids) };
}

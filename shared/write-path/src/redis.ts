// A Redis client as the write path uses one: a command fails at once while Redis is away instead of
// queueing, since what Redis holds (cache entries, rate-limit counters) is optional.
import { Redis } from 'ioredis';

export const REDIS_CONNECT_TIMEOUT_MS = 2000;

export function createRedis(url: string, commandTimeoutMs: number): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // Fail a command at once while Redis is away instead of queueing it: the cache is optional.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

// Liveness and readiness. /readyz is 200 only when every dependency a request needs answers.
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { CommandBus } from '@fleet/shared';

export interface HealthDeps {
  pool: Pool;
  redis: Redis;
  bus: CommandBus;
  isStopping: () => boolean;
}

async function check(probe: () => Promise<unknown>): Promise<'up' | 'down'> {
  try {
    await probe();
    return 'up';
  } catch {
    return 'down';
  }
}

export function addHealthRoutes(router: Express, deps: HealthDeps): void {
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'alive' });
  });
  router.get('/readyz', async (_req, res) => {
    const [postgres, redis] = await Promise.all([
      check(() => deps.pool.query('SELECT 1')),
      check(() => deps.redis.ping()),
    ]);
    const checks = { postgres, redis, kafka: deps.bus.isReady() ? 'up' : 'down' };
    const ready = !deps.isStopping() && Object.values(checks).every((state) => state === 'up');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
}

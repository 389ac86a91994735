// Liveness and readiness. /readyz answers 503 only when this instance cannot do its job: PostgreSQL or
// Kafka does not answer, a topic it needs is missing, or it is stopping. Redis is a cache: while it is
// away, category reads are served from PostgreSQL, so the instance stays ready and says "degraded".
import { missingTopicsMessage } from '@fleet/shared/kafka/topic-check';
import type { RouteHandlers } from './route-handler';
import { sendJson } from './send-json';

/** Whether commands can be published and replies received now, and why not (the write path's CommandBus). */
export interface WritePathReadiness {
  isReady(): boolean;
  notReadyReason(): string | undefined;
}

export interface HealthDeps {
  /** Resolve when PostgreSQL answers, reject when it does not. */
  pingDatabase: () => Promise<unknown>;
  /** The same of Redis. */
  pingCache: () => Promise<unknown>;
  bus: WritePathReadiness;
  /** The topics this gateway needs that the broker does not have. */
  missingTopics: () => Promise<string[]>;
  isStopping: () => boolean;
}

type State = 'up' | 'down';

async function check(probe: () => Promise<unknown>): Promise<State> {
  try {
    await probe();
    return 'up';
  } catch {
    return 'down';
  }
}

export function healthHandlers(deps: HealthDeps): Pick<RouteHandlers, 'liveness' | 'readiness'> {
  return {
    async liveness(_req, res) {
      sendJson(res, 200, { status: 'alive' });
    },
    async readiness(_req, res) {
      const [postgres, redis, missing] = await Promise.all([
        check(deps.pingDatabase),
        check(deps.pingCache),
        deps.bus.isReady() ? deps.missingTopics().catch(() => undefined) : Promise.resolve(undefined),
      ]);
      // Whether Kafka answers is the write path's to judge, so that this answer and its writes' refusals
      // agree; the metadata asked here finds topics that are missing. One that times out says no more
      // than the write path will in a moment, and sooner than its refusals would.
      const kafka: State = deps.bus.isReady() && !missing?.length ? 'up' : 'down';
      const checks = { postgres, redis, kafka };
      const ready = !deps.isStopping() && postgres === 'up' && kafka === 'up';
      const status = !ready ? 'not ready' : redis === 'up' ? 'ready' : 'degraded';
      const detail = missing?.length ? missingTopicsMessage(missing) : deps.bus.notReadyReason();
      sendJson(res, ready ? 200 : 503, { status, checks, ...(detail ? { detail } : {}) });
    },
  };
}

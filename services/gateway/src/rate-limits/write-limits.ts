// The rate limits of the write routes, counted in Redis so that every gateway shares them: positions per
// device (by IMEI) and requests per token subject. Each limit lets its burst through at once and then
// holds the client to its rate: a fixed window (rate-limiter-flexible's RateLimiterRedis) of `burst`
// points lasting as long as the rate takes to send as many. Redis is optional here as for the category
// cache: while it is away or slow a write is let through unchecked at once, counted, and the outage is
// logged once.
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, type Logger } from '@fleet/shared';

export interface RateLimitSettings {
  /** Positions a device may send per minute; 0: no device limit. */
  devicePerMinute: number;
  /** Positions a device may send beyond its minute's quota before it is refused; 0: none. */
  deviceBurst: number;
  /** Requests one token subject may send per second; 0: no subject limit. */
  subjectPerSecond: number;
  /** Requests beyond the second's quota; 0: none. */
  subjectBurst: number;
}

export interface WriteLimitsOptions {
  redis: Redis;
  /** Prefix of every key, so that gateways sharing a Redis share limits only when they share it. */
  keyPrefix: string;
  settings: RateLimitSettings;
  logger: Logger;
  /** Counts a write let through unchecked because Redis was unavailable. */
  onFallback?: () => void;
}

export interface WriteLimits {
  /** Counts one request against the token subject; rejects with a 429 AppError when it is over its limit. */
  admitSubject(subject: string): Promise<void>;
  /**
   * Counts each device's positions against that device; rejects with a 429 AppError when any of them
   * is over its limit (the request is then refused whole).
   */
  admitDevices(positionsByDevice: ReadonlyMap<string, number>): Promise<void>;
}

/** After a failed command, how long to let writes through unchecked before trying Redis again. */
const PAUSE_AFTER_FAILURE_MS = 1000;

interface Policy {
  /** The policy's name in the RateLimit-Policy and RateLimit headers. */
  name: 'device' | 'subject';
  kind: 'deviceRateLimited' | 'subjectRateLimited';
  limiter: { consume(key: string, points: number): Promise<RateLimiterRes> };
  /** The RateLimit-Policy field value (draft-ietf-httpapi-ratelimit-headers-10). */
  policyHeader: string;
}

/**
 * The window a limit of `rate` per `unitSeconds` with a burst of `burst` is counted in: `burst` points
 * over the time the rate takes to send as many, so that at most `burst` go through at once and, window
 * after window, the rate holds. A window is at least a second (Redis keys expire in whole seconds): a
 * burst smaller than a second's worth of the rate is raised to it. Without a burst, the rate's own unit.
 */
export function limitWindow(rate: number, unitSeconds: number, burst: number): { points: number; seconds: number } {
  if (burst === 0) return { points: rate, seconds: unitSeconds };
  const seconds = Math.max(1, Math.round((burst * unitSeconds) / rate));
  return { points: Math.max(burst, Math.round((rate * seconds) / unitSeconds)), seconds };
}

function createPolicy(
  redis: Redis,
  keyPrefix: string,
  name: Policy['name'],
  kind: Policy['kind'],
  rate: number,
  unitSeconds: number,
  burst: number,
): Policy {
  const { points, seconds } = limitWindow(rate, unitSeconds, burst);
  return {
    name,
    kind,
    limiter: new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}rate:${name}`,
      points,
      duration: seconds,
      rejectIfRedisNotReady: true,
    }),
    policyHeader: `"${name}";q=${points};w=${seconds}`,
  };
}

interface Refusal {
  policy: Policy;
  retryAfterSeconds: number;
}

interface Unavailable {
  unavailable: unknown;
}

function refused(refusal: Refusal): AppError {
  const { policy, retryAfterSeconds } = refusal;
  return new AppError({
    kind: policy.kind,
    detail:
      policy.name === 'device'
        ? `a device in this request is over its limit of positions; retry after ${retryAfterSeconds} s`
        : `this token's subject is over its limit of requests; retry after ${retryAfterSeconds} s`,
    retryAfterSeconds,
    headers: { 'RateLimit-Policy': policy.policyHeader, RateLimit: `"${policy.name}";r=0;t=${retryAfterSeconds}` },
  });
}

export function createWriteLimits(options: WriteLimitsOptions): WriteLimits {
  const { redis, keyPrefix, settings, logger, onFallback } = options;
  const devices =
    settings.devicePerMinute > 0
      ? createPolicy(redis, keyPrefix, 'device', 'deviceRateLimited', settings.devicePerMinute, 60, settings.deviceBurst)
      : undefined;
  const subjects =
    settings.subjectPerSecond > 0
      ? createPolicy(redis, keyPrefix, 'subject', 'subjectRateLimited', settings.subjectPerSecond, 1, settings.subjectBurst)
      : undefined;
  const breaker = circuitBreaker(handleAll, { halfOpenAfter: PAUSE_AFTER_FAILURE_MS, breaker: new ConsecutiveBreaker(1) });

  let unavailable = false;
  /**
   * Counts a write let through, and logs the failure that starts an outage. An open breaker refuses
   * without asking Redis, so its error is no news of an outage.
   */
  const fallBack = (error: unknown) => {
    onFallback?.();
    if (unavailable || error instanceof BrokenCircuitError) return;
    unavailable = true;
    logger.warn({ reason: (error as Error).message }, 'rate limits unavailable (Redis): writes are let through unchecked until it answers');
  };
  const markAvailable = () => {
    if (!unavailable) return;
    unavailable = false;
    logger.info('rate limits enforced again: Redis answers');
  };

  /** A refusal, undefined within the limit, or the error when Redis did not answer. */
  const check = (policy: Policy, key: string, points: number): Promise<Refusal | undefined | Unavailable> =>
    breaker
      .execute(() =>
        // An over-the-limit answer rejects with a RateLimiterRes: turned into a value here, so that only
        // Redis failures reach the breaker.
        policy.limiter.consume(key, points).then(
          () => undefined,
          (outcome: unknown) => {
            if (!(outcome instanceof RateLimiterRes)) throw outcome;
            return { policy, retryAfterSeconds: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)) };
          },
        ),
      )
      .catch((error: unknown) => ({ unavailable: error }));

  /** Never rejects for Redis: while it is unavailable everything is let through. */
  const admit = async (checks: Promise<Refusal | undefined | Unavailable>[]): Promise<void> => {
    const outcomes = await Promise.all(checks);
    let refusal: Refusal | undefined;
    let failure: Unavailable | undefined;
    for (const outcome of outcomes) {
      if (outcome === undefined) continue;
      if ('unavailable' in outcome) failure ??= outcome;
      else if (!refusal || outcome.retryAfterSeconds > refusal.retryAfterSeconds) refusal = outcome;
    }
    if (failure) fallBack(failure.unavailable);
    else markAvailable();
    if (refusal) throw refused(refusal);
  };

  return {
    async admitSubject(subject) {
      if (subjects) await admit([check(subjects, subject, 1)]);
    },
    async admitDevices(positionsByDevice) {
      if (!devices || positionsByDevice.size === 0) return;
      await admit(Array.from(positionsByDevice, ([imei, positions]) => check(devices, imei, positions)));
    },
  };
}

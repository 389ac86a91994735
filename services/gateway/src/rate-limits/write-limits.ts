// The rate limits of the write routes, counted in Redis so that every gateway shares them: positions per
// device (by IMEI) and requests per token subject. Each limit lets its burst through at once and then
// holds the client to its rate: a fixed window of `burst` points lasting as long as the rate takes to
// send as many. A request's subject and devices are counted by one Lua script, so a write costs one
// Redis round trip and the counts are atomic: a request its subject's limit refuses is not counted
// against its devices. Redis is optional here as for the category cache: while it is away or slow a
// write is let through unchecked at once, counted, and the outage is logged once.
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import type { Redis } from 'ioredis';
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
  /**
   * Counts one request against its token subject and, unless the subject's limit refuses it, each
   * device's positions against that device; rejects with a 429 AppError when the subject or any device
   * is over its limit (the request is then refused whole).
   */
  admit(subject: string, positionsByDevice: ReadonlyMap<string, number>): Promise<void>;
}

/** After a failed command, how long to let writes through unchecked before trying Redis again. */
const PAUSE_AFTER_FAILURE_MS = 1000;

/**
 * Counts a request in fixed windows: each key is created at 0 with its window as its expiry, then
 * incremented (a count refused still counts, so a client that keeps pushing stays refused until its
 * window ends). The keys of one request live in one Redis, not spread over a Redis Cluster's slots.
 *
 * KEYS: the subject's key when ARGV[1] is 1, then one key per device.
 * ARGV: [1] 1 or 0, [2] subject points, [3] subject window in seconds, [4] device points,
 *       [5] device window in seconds, [6...] each device's positions, in the order of the keys.
 * Answers {0} within every limit; {1, ms} when the subject is over its limit, its devices left
 * uncounted; {2, ms} when a device is over its limit, ms being the longest wait of those over theirs.
 */
const ADMIT_SCRIPT = `
local function count(key, points, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, points)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = seconds * 1000
  end
  return consumed, ttl
end
local first = 1
if ARGV[1] == '1' then
  local consumed, ttl = count(KEYS[1], 1, tonumber(ARGV[3]))
  if consumed > tonumber(ARGV[2]) then return {1, ttl} end
  first = 2
end
local wait = -1
for i = first, #KEYS do
  local consumed, ttl = count(KEYS[i], tonumber(ARGV[6 + i - first]), tonumber(ARGV[5]))
  if consumed > tonumber(ARGV[4]) and ttl > wait then wait = ttl end
end
if wait >= 0 then return {2, wait} end
return {0}
`;

/** What the script answers: within the limits, or refused by the subject's (1) or a device's (2), and for how many ms. */
type ScriptAnswer = [0] | [1 | 2, number];

interface AdmitCommand {
  fleetAdmitWrite(...keysAndArgs: Array<string | number>): Promise<ScriptAnswer>;
}

interface Policy {
  /** The policy's name in the RateLimit-Policy and RateLimit headers, and in its Redis keys. */
  name: 'device' | 'subject';
  kind: 'deviceRateLimited' | 'subjectRateLimited';
  points: number;
  seconds: number;
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

function createPolicy(name: Policy['name'], kind: Policy['kind'], rate: number, unitSeconds: number, burst: number): Policy {
  const { points, seconds } = limitWindow(rate, unitSeconds, burst);
  return { name, kind, points, seconds, policyHeader: `"${name}";q=${points};w=${seconds}` };
}

function refused(policy: Policy, waitMs: number): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
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
      ? createPolicy('device', 'deviceRateLimited', settings.devicePerMinute, 60, settings.deviceBurst)
      : undefined;
  const subjects =
    settings.subjectPerSecond > 0
      ? createPolicy('subject', 'subjectRateLimited', settings.subjectPerSecond, 1, settings.subjectBurst)
      : undefined;
  redis.defineCommand('fleetAdmitWrite', { lua: ADMIT_SCRIPT });
  const script = redis as unknown as AdmitCommand;
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

  /** Asks Redis unless it is known to be away: a command would only wait for its timeout. */
  const run = (keysAndArgs: Array<string | number>): Promise<ScriptAnswer> =>
    breaker.execute(() => {
      if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
      return script.fleetAdmitWrite(...keysAndArgs);
    });

  return {
    async admit(subject, positionsByDevice) {
      const countSubject = subjects !== undefined;
      const counted = devices ? [...positionsByDevice] : [];
      if (!countSubject && counted.length === 0) return;
      const keys = [
        ...(countSubject ? [`${keyPrefix}rate:subject:${subject}`] : []),
        ...counted.map(([imei]) => `${keyPrefix}rate:device:${imei}`),
      ];
      const args = [
        countSubject ? 1 : 0,
        subjects?.points ?? 0,
        subjects?.seconds ?? 0,
        devices?.points ?? 0,
        devices?.seconds ?? 0,
        ...counted.map(([, positions]) => positions),
      ];
      let answer: ScriptAnswer;
      try {
        answer = await run([keys.length, ...keys, ...args]);
      } catch (error) {
        // Never rejects for Redis: while it is unavailable everything is let through.
        fallBack(error);
        return;
      }
      markAvailable();
      if (answer[0] === 1) throw refused(subjects!, answer[1]);
      if (answer[0] === 2) throw refused(devices!, answer[1]);
    },
  };
}

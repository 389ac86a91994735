// The rate limits of the write routes, counted in Redis so that every gateway shares them: positions per
// device (by IMEI) and requests per token subject. Each limit lets its burst through at once and then
// holds the client to its rate: a fixed window of `burst` points lasting as long as the rate takes to
// send as many. A request's subject and devices are counted by one Lua script, atomically: a request its
// subject's limit refuses is not counted against its devices. The writes that arrive together share one
// script run, so a busy gateway sends Redis one command per turn of its event loop, not one per write.
// Redis is optional here as for the category cache: while it is away or slow a write is let through
// unchecked at once, counted, and the outage is logged once.
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import type { Redis } from 'ioredis';
import type { Logger } from '@fleet/shared/logger';
import { coalesce } from '@fleet/shared/coalesce';
import { AppError } from '@fleet/shared/errors';

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

/** What a write that names no device counts: its request against its token subject, nothing more. */
export const NO_DEVICES: ReadonlyMap<string, number> = new Map();

/** After a failed command, how long to let writes through unchecked before trying Redis again. */
const PAUSE_AFTER_FAILURE_MS = 1000;

/**
 * Counts requests in fixed windows: each key is created at 0 with its window as its expiry, then
 * incremented (a count refused still counts, so a client that keeps pushing stays refused until its
 * window ends). The requests of one call are counted one after the other, each as if alone: the writes
 * that reach a gateway at once share one script run, so Redis runs one script and the gateway sends one
 * command for all of them. Their keys live in one Redis, not spread over a Redis Cluster's slots.
 *
 * KEYS: for each request in turn, its subject's key when it counts its subject, then one key per device.
 * ARGV: [1] subject points, [2] subject window in seconds, [3] device points, [4] device window in
 *       seconds, then for each request: 1 or 0 (whether its subject is counted), its number of devices,
 *       and each device's positions, in the order of its keys.
 * Answers two numbers a request, in order: 0, 0 within every limit; 1, ms when its subject is over its
 * limit, its devices left uncounted; 2, ms when a device is over its limit, ms being the longest wait
 * of those over theirs.
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
local subjectPoints, subjectSeconds = tonumber(ARGV[1]), tonumber(ARGV[2])
local devicePoints, deviceSeconds = tonumber(ARGV[3]), tonumber(ARGV[4])
local answers = {}
local key, arg = 1, 5
while arg <= #ARGV do
  local countSubject, devices = ARGV[arg] == '1', tonumber(ARGV[arg + 1])
  arg = arg + 2
  local code, wait = 0, 0
  if countSubject then
    local consumed, ttl = count(KEYS[key], 1, subjectSeconds)
    key = key + 1
    if consumed > subjectPoints then code, wait = 1, ttl end
  end
  if code == 0 then
    local longest = -1
    for i = 0, devices - 1 do
      local consumed, ttl = count(KEYS[key + i], tonumber(ARGV[arg + i]), deviceSeconds)
      if consumed > devicePoints and ttl > longest then longest = ttl end
    end
    if longest >= 0 then code, wait = 2, longest end
  end
  key, arg = key + devices, arg + devices
  answers[#answers + 1] = code
  answers[#answers + 1] = wait
end
return answers
`;

/** One request to count: its subject's key (when counted) and its devices' keys with their positions. */
interface Admission {
  subjectKey: string | undefined;
  devices: Array<[key: string, positions: number]>;
}

/** What the script answers for one request: within the limits (0), or refused by the subject's (1) or a device's (2), and for how many ms. */
type Verdict = [code: 0 | 1 | 2, waitMs: number];

interface AdmitCommand {
  /**
   * The key count, the keys, then the arguments, as one array: ioredis flattens it into the command, and
   * the writes sharing a run can bring more of them than a JavaScript call takes as spread arguments.
   */
  fleetAdmitWrites(keysAndArgs: Array<string | number>): Promise<number[]>;
}

interface Policy {
  /** The policy's name in its Redis keys, and in the answer's RateLimit headers. */
  name: 'device' | 'subject';
  kind: 'deviceRateLimited' | 'subjectRateLimited';
  points: number;
  seconds: number;
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
  return { name, kind, points, seconds };
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
    fields: { rateLimit: { policy: policy.name, quota: policy.points, windowSeconds: policy.seconds } },
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
  redis.defineCommand('fleetAdmitWrites', { lua: ADMIT_SCRIPT });
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
  const run = (keysAndArgs: Array<string | number>): Promise<number[]> =>
    breaker.execute(() => {
      if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
      return script.fleetAdmitWrites(keysAndArgs);
    });

  /** One script run for every request waiting, in the order they came. */
  const countAll = coalesce<Admission, Verdict>(async (admissions) => {
    const keys: string[] = [];
    const args: number[] = [subjects?.points ?? 0, subjects?.seconds ?? 0, devices?.points ?? 0, devices?.seconds ?? 0];
    for (const { subjectKey, devices: counted } of admissions) {
      if (subjectKey !== undefined) keys.push(subjectKey);
      args.push(subjectKey === undefined ? 0 : 1, counted.length);
      for (const [key, positions] of counted) {
        keys.push(key);
        args.push(positions);
      }
    }
    const answers = await run([keys.length, ...keys, ...args]);
    return admissions.map((_, index) => [answers[2 * index], answers[2 * index + 1]] as Verdict);
  });

  return {
    async admit(subject, positionsByDevice) {
      const subjectKey = subjects ? `${keyPrefix}rate:subject:${subject}` : undefined;
      const counted = devices
        ? Array.from(positionsByDevice, ([imei, positions]): [string, number] => [`${keyPrefix}rate:device:${imei}`, positions])
        : [];
      if (subjectKey === undefined && counted.length === 0) return;
      let verdict: Verdict;
      try {
        [verdict] = (await countAll([{ subjectKey, devices: counted }])) as [Verdict];
      } catch (error) {
        // Never rejects for Redis: while it is unavailable everything is let through.
        fallBack(error);
        return;
      }
      markAvailable();
      if (verdict[0] === 1) throw refused(subjects!, verdict[1]);
      if (verdict[0] === 2) throw refused(devices!, verdict[1]);
    },
  };
}

/** Rate limits count a tracker, whatever its protocol, under its device, as a token's subject is counted. */
export const trackerSubject = (imei: string) => `device:${imei}`;

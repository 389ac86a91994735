// The fault tests' load: trip locations or vehicle groups posted at a steady pace while a fault is
// injected, each attempt with what the client was told, and the retry of every unconfirmed post with the
// same body (and key) until it is confirmed.
import { randomInt, randomUUID } from 'node:crypto';
import { buildGroup, buildTrip, signToken } from '../support/harness';
import { boundedWait } from '../support/deadline';

export interface Attempt {
  status: number | 'network-error';
  /** Date.now() when the request was sent, and when its answer (or the failure) came. */
  startedAt: number;
  answeredAt: number;
  ms: number;
  /** True when the body was a JSON object, as every answer of the API must be. */
  json: boolean;
  id?: number;
  code?: string;
  /** The Idempotency-Key header of the answer (a vehicle group's 503 hands the create's key back). */
  idempotencyKey?: string;
  /** Why no answer came: the error code of fetch's cause (e.g. UND_ERR_CONNECT_TIMEOUT, ECONNRESET). */
  failure?: string;
}

/** One trip location, and every attempt to post it. */
export interface Post {
  trip: Record<string, unknown>;
  attempts: Attempt[];
}

/** One vehicle group, posted and retried under one Idempotency-Key. */
export interface GroupPost {
  group: { vehicleGroupName: string; vehicleIds: number[] };
  /** The key sent: the client's own, or for a keyless client the one its last 503 handed back. */
  key?: string;
  attempts: Attempt[];
}

export interface Attempted {
  attempts: Attempt[];
}

export interface Load<P extends Attempted = Post> {
  /** Every post sent so far; the array grows while the load runs. */
  posts: P[];
  /**
   * Stops sending new posts and resolves once every first attempt sent has been answered. A test calls
   * it once its fault has landed and been seen, so the load spans the fault however slow the host.
   */
  finish(): Promise<void>;
  /** First attempts answered so far, by outcome. */
  answered(): { total: number; ok: number };
  /**
   * First attempts sent at least 2 ms ago and not answered yet: a fault that lands now catches them in
   * flight as inFlightAt counts them (sent strictly before the fault, by its millisecond clock, and
   * answered after it).
   */
  unanswered(): number;
}

/** A load sends at most this many posts, and for at most this long, should its test never finish it. */
const MAX_LOAD_POSTS = 20_000;
const MAX_LOAD_MS = 180_000;

export async function authorization(): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await signToken({}, { expiresIn: '1h' })}` };
}

export async function send(url: string, body: unknown, headers: Record<string, string>): Promise<Attempt> {
  const startedAt = Date.now();
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => undefined)) as { data?: { id?: number }; code?: string } | undefined;
    return {
      status: response.status,
      startedAt,
      answeredAt: Date.now(),
      ms: performance.now() - started,
      json: typeof answer === 'object' && answer !== null,
      id: answer?.data?.id,
      code: answer?.code,
      idempotencyKey: response.headers.get('idempotency-key') ?? undefined,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; name?: string } }).cause;
    const failure = cause?.code ?? cause?.name ?? String(error);
    return { status: 'network-error', startedAt, answeredAt: Date.now(), ms: performance.now() - started, json: false, failure };
  }
}

/** Posts a group under its key, if it has one; a keyless client keeps the key a 503 hands it, as told. */
async function postGroup(url: string, post: GroupPost, headers: Record<string, string>): Promise<Attempt> {
  const attempt = await send(url, post.group, post.key === undefined ? headers : { ...headers, 'idempotency-key': post.key });
  if (attempt.status === 503 && attempt.idempotencyKey) post.key ??= attempt.idempotencyKey;
  return attempt;
}

/**
 * Sends a new post's first attempt every `intervalMs`, to wherever `url()` points at that moment, until
 * finish() (or the load's bounds).
 */
function startSending<P extends Attempted>(
  make: () => P,
  intervalMs: number,
  atMost: number,
  sendOne: (post: P) => Promise<Attempt>,
): Load<P> {
  const posts: P[] = [];
  /** When each first attempt was sent, while it waits for its answer. */
  const waiting = new Map<number, number>();
  const answers: Array<Promise<void>> = [];
  let total = 0;
  let ok = 0;
  let finished = false;
  const startedAt = Date.now();
  const sending = (async () => {
    while (!finished && posts.length < atMost && Date.now() - startedAt < MAX_LOAD_MS) {
      const index = posts.length;
      const post = make();
      posts.push(post);
      waiting.set(index, Date.now());
      answers.push(
        sendOne(post).then((attempt) => {
          waiting.delete(index);
          post.attempts.push(attempt);
          total += 1;
          if (attempt.status === 200) ok += 1;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  const unanswered = () => {
    const now = Date.now();
    return [...waiting.values()].filter((sentAt) => sentAt < now - 1).length;
  };
  return {
    posts,
    async finish() {
      finished = true;
      await sending;
      await Promise.all(answers);
    },
    answered: () => ({ total, ok }),
    unanswered,
  };
}

export type UrlOf = string | (() => string);
export const resolveUrl = (url: UrlOf) => (typeof url === 'string' ? url : url());

/**
 * Posts trip locations, one every `intervalMs` until finish(), each from a device of its own, so that
 * every acknowledged post can be matched to exactly one row.
 */
export function startLoad(url: UrlOf, headers: Record<string, string>, intervalMs: number, atMost = MAX_LOAD_POSTS): Load {
  return startSending(
    (): Post => ({ trip: buildTrip(), attempts: [] }),
    intervalMs,
    atMost,
    (post) => send(resolveUrl(url), post.trip, headers),
  );
}

/**
 * Posts vehicle groups, one every `intervalMs` until finish(), each with a name and members of its own,
 * and an Idempotency-Key of its own unless `keyless` (such a client retries with the key a 503 hands
 * back, as the 503 tells it to).
 */
export function startGroupLoad(
  url: UrlOf,
  headers: Record<string, string>,
  intervalMs: number,
  { keyless = false, atMost = MAX_LOAD_POSTS }: { keyless?: boolean; atMost?: number } = {},
): Load<GroupPost> {
  const make = (): GroupPost => {
    const vehicleIds = [...new Set(Array.from({ length: 1 + randomInt(8) }, () => 1 + randomInt(1_000_000)))];
    const name = randomUUID();
    return {
      group: buildGroup({ vehicleGroupName: `Fault ${name}`, vehicleIds }) as GroupPost['group'],
      key: keyless ? undefined : name,
      attempts: [],
    };
  };
  return startSending(make, intervalMs, atMost, (post) => postGroup(resolveUrl(url), post, headers));
}

/** Sends every post that has no 200 yet again, until each is confirmed or the time is up. */
async function retryUntilConfirmed<P extends Attempted>(
  posts: P[],
  sendOne: (post: P) => Promise<Attempt>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + boundedWait(timeoutMs).ms;
  for (;;) {
    const open = posts.filter((post) => post.attempts.at(-1)?.status !== 200);
    if (open.length === 0 || Date.now() > deadline) return;
    // A few at a time, so that the retries themselves are a modest load on a recovering stack.
    for (let start = 0; start < open.length; start += 100) {
      await Promise.all(
        open.slice(start, start + 100).map(async (post) => {
          post.attempts.push(await sendOne(post));
        }),
      );
    }
    if (posts.some((post) => post.attempts.at(-1)?.status !== 200)) await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Posts every trip that has no 200 yet again, with the same body, until each is confirmed or the time
 * is up. Trip locations are idempotent by (imei, gpsTime), so a retry never makes a second row.
 */
export function retryUnconfirmed(url: UrlOf, headers: Record<string, string>, posts: Post[], timeoutMs = 60_000): Promise<void> {
  return retryUntilConfirmed(posts, (post) => send(resolveUrl(url), post.trip, headers), timeoutMs);
}

/** The same for vehicle groups, each retried with its body and its Idempotency-Key. */
export function retryUnconfirmedGroups(url: UrlOf, headers: Record<string, string>, posts: GroupPost[], timeoutMs = 60_000): Promise<void> {
  return retryUntilConfirmed(posts, (post) => postGroup(resolveUrl(url), post, headers), timeoutMs);
}

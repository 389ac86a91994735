// What the fault tests share: a stack of real service processes, a bounded load of trip locations or
// vehicle groups, the retry of every unconfirmed post with the same body (and key), the time the stack
// takes to serve again, and the audit that compares what the clients were told with what PostgreSQL
// holds. Each test prints its figures on one line starting with "fault-figures", so a run's output can
// be collected for the docs.
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, escapeIdentifier, Pool } from 'pg';
import { migrate } from '@fleet/shared/db/migrate';
import { dropDatabase } from '@fleet/shared/db/pool';
import { headers as kafkaHeaders } from '@fleet/shared/kafka/topics';
import { createLogger } from '@fleet/shared/logger';
import { writerConfig } from '@fleet/shared/writer-service';
import { gatewayConfig } from '@fleet/gateway';
import { PROBE_HEADER } from '../../shared/write-path/src/kafka/reply-listener';
import { baseEnv, buildGroup, buildTrip, db, signToken, storedTripCount, testServers, uniquePrefix } from '../support/harness';
import { boundedWait } from '../support/deadline';
import { eventually } from '../support/eventually';
import { messagesIn, provisionTopics, readTopic } from '../support/kafka';
import { recordFaultRow, type FaultRow } from '../support/fault-figures';
import { spawnService, type ServiceProcess } from '../support/processes';

export const TRIP_PATH = '/fleet/api/v1/trip-location';
export const GROUP_PATH = '/fleet/api/v1/vehicle-group';

export interface ProcessStack {
  /** The gateway running now (restartGateway replaces it). */
  gateway: ServiceProcess;
  writers: ServiceProcess[];
  groupWriters: ServiceProcess[];
  env: NodeJS.ProcessEnv;
  prefix: string;
  /** Where trip locations are posted, on the gateway running now. */
  readonly url: string;
  /** Where vehicle groups are posted, on the gateway running now. */
  readonly groupUrl: string;
  addWriter(): Promise<ServiceProcess>;
  addGroupWriter(): Promise<ServiceProcess>;
  /** Starts a new gateway in place of one that has ended (e.g. killed by the test). */
  restartGateway(): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  env?: Record<string, string>;
  /** For the trip-writers alone, over `env`. */
  writerEnv?: Record<string, string>;
  /** Leaves the consumer session at its deployed default instead of the broker's minimum. */
  deployedDefaults?: boolean;
  tripWriters?: number;
  groupWriters?: number;
}

/** A gateway and writers as separate processes, on topics of their own. */
export async function startProcessStack(label: string, options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const prefix = uniquePrefix(label);
  const env = baseEnv(prefix, {
    LOG_LEVEL: 'info',
    // A killed writer's partitions stand still until the broker ends its session; the broker's minimum
    // keeps that to seconds (recoveryBoundSeconds).
    ...(options.deployedDefaults ? {} : { KAFKA_SESSION_TIMEOUT_MS: '6000' }),
    // One token posts a whole fleet's load and its retries: its subject's rate limit is off.
    RATE_LIMIT_SUBJECT_PER_SECOND: '0',
    ...options.env,
  });
  await provisionTopics(prefix, env.KAFKA_BROKERS!.split(','));
  const writerEnv = { ...env, ...options.writerEnv };
  // One after the other, as a deployment scales out: each writer is in the group before the next joins.
  const writers: ServiceProcess[] = [];
  for (let count = 0; count < (options.tripWriters ?? 1); count += 1) writers.push(await spawnService('trip-writer', writerEnv));
  const groupWriters: ServiceProcess[] = [];
  for (let count = 0; count < (options.groupWriters ?? 0); count += 1) groupWriters.push(await spawnService('group-writer', env));
  const stack: ProcessStack = {
    gateway: await spawnService('gateway', env),
    writers,
    groupWriters,
    env,
    prefix,
    get url() {
      return `${stack.gateway.url}${TRIP_PATH}`;
    },
    get groupUrl() {
      return `${stack.gateway.url}${GROUP_PATH}`;
    },
    async addWriter() {
      const writer = await spawnService('trip-writer', writerEnv);
      writers.push(writer);
      return writer;
    },
    async addGroupWriter() {
      const writer = await spawnService('group-writer', env);
      groupWriters.push(writer);
      return writer;
    },
    async restartGateway() {
      stack.gateway = await spawnService('gateway', env);
      return stack.gateway;
    },
    async stop() {
      await stack.gateway.stop();
      await Promise.allSettled([...writers, ...groupWriters].map((writer) => writer.stop()));
    },
  };
  return stack;
}

export interface PrivateDatabase {
  url: string;
  /** A small pool on it, for auditing what the services stored. */
  pool: Pool;
  /**
   * The PostgreSQL outage of the fault tests: the services' connections die mid-use and come back at
   * once for 1.5 s, then the database refuses new ones for `refusedForMs` while open ones keep dying.
   * Resolves with how many connections were terminated.
   */
  cutConnections(refusedForMs: number): Promise<number>;
  /** Lets connections in again, closes its clients and drops the database. */
  drop(): Promise<void>;
}

/**
 * A database of the test's own with the schema, for faults that must not reach other tests' connections.
 * The outage is driven from the server's maintenance database, which stays reachable.
 */
export async function createPrivateDatabase(): Promise<PrivateDatabase> {
  const url = new URL(testServers().databaseUrl);
  url.pathname = `${url.pathname}_fault_${randomBytes(3).toString('hex')}`;
  await migrate(url.toString(), createLogger('test-setup', 'warn'));
  const name = decodeURIComponent(url.pathname.slice(1));
  const pool = new Pool({ connectionString: url.toString(), max: 2 });
  const adminUrl = new URL(testServers().databaseUrl);
  adminUrl.pathname = '/postgres';
  const admin = new Client({ connectionString: adminUrl.toString() });
  await admin.connect();

  const allowConnections = (allowed: boolean) => admin.query(`ALTER DATABASE ${escapeIdentifier(name)} WITH ALLOW_CONNECTIONS ${allowed}`);
  /** Terminates the services' connections every `everyMs` for `forMs`. */
  async function terminateRepeatedly(everyMs: number, forMs: number): Promise<number> {
    let terminated = 0;
    const until = Date.now() + forMs;
    while (Date.now() < until) {
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'fleet-%'`,
        [name],
      );
      terminated += rowCount ?? 0;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    return terminated;
  }

  return {
    url: url.toString(),
    pool,
    async cutConnections(refusedForMs) {
      let terminated = await terminateRepeatedly(100, 1500);
      await allowConnections(false);
      terminated += await terminateRepeatedly(200, refusedForMs);
      await allowConnections(true);
      return terminated;
    },
    async drop() {
      await allowConnections(true).catch(() => undefined);
      await pool.end();
      await admin.end();
      await dropDatabase(url.toString());
    },
  };
}

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

interface Attempted {
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

async function send(url: string, body: unknown, headers: Record<string, string>): Promise<Attempt> {
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

type UrlOf = string | (() => string);
const resolveUrl = (url: UrlOf) => (typeof url === 'string' ? url : url());

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

export interface Figures {
  fault: string;
  sent: number;
  /** First attempts answered 200, and 503. */
  ok: number;
  unavailable: number;
  /** First attempts that got no answer at all (the connection refused or cut). */
  noAnswer: number;
  /** The codes of the first 503s, e.g. E-S1/1-02 (no reply in time) or E-S1/1-01 (broker unavailable). */
  unavailableCodes: Record<string, number>;
  /** Over every attempt, first or retried: answers neither 200 nor a JSON 503, and requests that got no answer. */
  otherStatus: number;
  /** The other answers by status and code, to tell what they were. */
  otherStatuses: Record<string, number>;
  networkErrors: number;
  /** The network errors by their failure, so that a run that had some says what they were. */
  networkFailures: Record<string, number>;
  retries: number;
  /** Rows stored for the posts (trip locations, or vehicle groups). */
  rows: number;
  /** Rows beyond the one a post (a position, or an Idempotency-Key) may have. */
  duplicates: number;
  /** Posts answered 200 (first try or retry) whose id is not their one row. */
  lost: number;
  /** Posts whose one row does not hold the values sent (for a group: exactly its members). */
  wrongValues: number;
  /** Posts never confirmed, even after retrying. */
  unconfirmed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!);
}

/** What the clients were told, before anything is compared with the database. */
function answerFigures(posts: Attempted[]): Omit<Figures, 'fault' | 'rows' | 'duplicates' | 'lost' | 'wrongValues'> {
  const first = posts.map((post) => post.attempts[0]!);
  const every = posts.flatMap((post) => post.attempts);
  const unavailableCodes: Record<string, number> = {};
  const networkFailures: Record<string, number> = {};
  for (const attempt of every) {
    if (attempt.failure) networkFailures[attempt.failure] = (networkFailures[attempt.failure] ?? 0) + 1;
  }
  for (const attempt of first) {
    if (attempt.status === 503) unavailableCodes[attempt.code ?? 'none'] = (unavailableCodes[attempt.code ?? 'none'] ?? 0) + 1;
  }
  const latencies = first.map((attempt) => attempt.ms).sort((a, b) => a - b);
  const other = every.filter(
    (attempt) => attempt.status !== 'network-error' && attempt.status !== 200 && !(attempt.status === 503 && attempt.json && attempt.code),
  );
  return {
    sent: posts.length,
    ok: first.filter((attempt) => attempt.status === 200).length,
    unavailable: first.filter((attempt) => attempt.status === 503).length,
    noAnswer: first.filter((attempt) => attempt.status === 'network-error').length,
    unavailableCodes,
    otherStatus: other.length,
    otherStatuses: Object.fromEntries(
      [...new Set(other.map((attempt) => `${attempt.status} ${attempt.code ?? ''}`.trim()))].map((key) => [
        key,
        other.filter((attempt) => `${attempt.status} ${attempt.code ?? ''}`.trim() === key).length,
      ]),
    ),
    networkErrors: every.filter((attempt) => attempt.status === 'network-error').length,
    networkFailures,
    retries: every.length - first.length,
    unconfirmed: posts.filter((post) => !post.attempts.some((attempt) => attempt.status === 200)).length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: percentile(latencies, 1),
  };
}

/** How a topic's commands were answered on the reply topic, counted by correlation id. */
export interface ReplyCounts {
  commands: number;
  /** Correlation ids found on more than one command: a command the gateway published twice. */
  publishedTwice: number;
  /** Commands with no reply at all. */
  unanswered: number;
  /** Commands answered once, twice, and more often. */
  answeredOnce: number;
  answeredTwice: number;
  answeredMore: number;
}

/**
 * One reply per delivery: the gateway published each command once, every command was answered, and
 * none more than twice; twice only for the commands redelivered after a writer's crash, of which there
 * were `redelivered` (a writer replies to each delivery, and a crash after the reply and before the
 * commit means a second one).
 */
export function expectOneReplyPerDelivery(replies: ReplyCounts, redelivered: number): void {
  expect({ publishedTwice: replies.publishedTwice, unanswered: replies.unanswered, answeredMore: replies.answeredMore }).toEqual({
    publishedTwice: 0,
    unanswered: 0,
    answeredMore: 0,
  });
  expect(replies.answeredTwice).toBeLessThanOrEqual(redelivered);
}

/** Every message a topic holds, read from its beginning. */
async function wholeTopic(topic: string) {
  const count = await messagesIn(topic);
  const messages = await readTopic(topic, count, 30_000);
  if (messages.length < count) throw new Error(`read ${messages.length} of the ${count} messages of ${topic}`);
  return messages;
}

/**
 * Reads a command topic and the reply topic whole, and counts each command's replies. A writer replies
 * once to each delivery of a command it handled, so a command is answered twice only when a writer
 * crashed after replying and before committing, and its successor replied again to the redelivery.
 */
export async function replyCounts(commandTopic: string, replyTopic: string): Promise<ReplyCounts> {
  const [commands, replies] = await Promise.all([wholeTopic(commandTopic), wholeTopic(replyTopic)]);
  const published = new Map<string, number>();
  for (const message of commands) {
    const id = message.headers[kafkaHeaders.correlationId]!;
    published.set(id, (published.get(id) ?? 0) + 1);
  }
  // A reply message holds the replies of many commands, each naming its correlation id.
  const answered = new Map<string, number>();
  for (const message of replies) {
    if (message.headers[PROBE_HEADER] !== undefined) continue;
    const entries = JSON.parse(message.value ?? '[]') as Array<{ correlationId?: string }>;
    for (const { correlationId: id } of Array.isArray(entries) ? entries : []) {
      if (id !== undefined && published.has(id)) answered.set(id, (answered.get(id) ?? 0) + 1);
    }
  }
  const times = [...published.keys()].map((id) => answered.get(id) ?? 0);
  return {
    commands: published.size,
    publishedTwice: [...published.values()].filter((count) => count > 1).length,
    unanswered: times.filter((count) => count === 0).length,
    answeredOnce: times.filter((count) => count === 1).length,
    answeredTwice: times.filter((count) => count === 2).length,
    answeredMore: times.filter((count) => count > 2).length,
  };
}

/** How many of the posted trips have a row, whatever the answers said. */
/** Answers that say nothing of the request was sent: the gateway was full, or shed it as backed up. */
const NOTHING_SENT = new Set(['E-S1/1-06', 'E-S1/1-08']);

/** The posts that may have reached Kafka: with an attempt not refused before anything was sent. */
export function postsSent(posts: Post[]): Post[] {
  return posts.filter((post) => post.attempts.some((attempt) => !(attempt.status === 503 && NOTHING_SENT.has(attempt.code ?? ''))));
}

export async function storedCount(posts: Post[], pool: Pool = db()): Promise<number> {
  return await storedTripCount(
    posts.map((post) => String(post.trip.imei)),
    pool,
  );
}

type TripRow = Record<string, unknown> & { id: string; imei: string; gps_time: Date };

/** Compares every answer with the rows stored for the posted devices. */
export async function audit(fault: string, posts: Post[], pool: Pool = db()): Promise<Figures> {
  const { rows } = await pool.query<TripRow>('SELECT * FROM trip_locations WHERE imei = ANY($1)', [
    posts.map((post) => String(post.trip.imei)),
  ]);
  const rowsByImei = new Map<string, TripRow[]>();
  for (const row of rows) rowsByImei.set(row.imei, [...(rowsByImei.get(row.imei) ?? []), row]);

  let lost = 0;
  let duplicates = 0;
  let wrongValues = 0;
  for (const post of posts) {
    const stored = rowsByImei.get(String(post.trip.imei)) ?? [];
    // Each post is a device of its own: more than one row for it is a position stored twice.
    duplicates += Math.max(0, stored.length - 1);
    const confirmedIds = post.attempts.filter((attempt) => attempt.status === 200).map((attempt) => attempt.id);
    // Every 200 must name the one row of this position, and every retry the same one.
    if (confirmedIds.some((id) => stored.length !== 1 || Number(stored[0]!.id) !== id)) lost += 1;
    const { imei: _imei, gpsTime, ...values } = post.trip;
    const held = (row: TripRow) =>
      row.gps_time.getTime() === Date.parse(String(gpsTime)) && Object.entries(values).every(([column, value]) => row[column] === value);
    if (stored.some((row) => !held(row))) wrongValues += 1;
  }
  return { fault, ...answerFigures(posts), rows: rows.length, duplicates, lost, wrongValues };
}

/**
 * Compares every group answer with the groups stored under the posted names (each post's name is its
 * own, so the groups of a name are the groups its Idempotency-Key made) and their members.
 */
export async function auditGroups(fault: string, posts: GroupPost[], pool: Pool = db()): Promise<Figures> {
  const { rows } = await pool.query<{ id: string; name: string; members: string[] }>(
    `SELECT g.id, g.name, array_remove(array_agg(m.vehicle_id ORDER BY m.vehicle_id), NULL)::text[] AS members
     FROM vehicle_groups g LEFT JOIN vehicle_group_members m ON m.vehicle_group_id = g.id
     WHERE g.name = ANY($1) GROUP BY g.id`,
    [posts.map((post) => post.group.vehicleGroupName)],
  );
  const groupsByName = new Map<string, typeof rows>();
  for (const row of rows) groupsByName.set(row.name, [...(groupsByName.get(row.name) ?? []), row]);

  let lost = 0;
  let duplicates = 0;
  let wrongValues = 0;
  for (const post of posts) {
    const stored = groupsByName.get(post.group.vehicleGroupName) ?? [];
    duplicates += Math.max(0, stored.length - 1);
    const confirmedIds = post.attempts.filter((attempt) => attempt.status === 200).map((attempt) => attempt.id);
    if (confirmedIds.some((id) => stored.length !== 1 || Number(stored[0]!.id) !== id)) lost += 1;
    const sent = [...post.group.vehicleIds].sort((a, b) => a - b).join(',');
    if (stored.some((group) => group.members.map(Number).join(',') !== sent)) wrongValues += 1;
  }
  return { fault, ...answerFigures(posts), rows: rows.length, duplicates, lost, wrongValues };
}

/** The warnings and errors the stack's processes logged, for the message of a failed test. */
export function problemsLogged(services: ServiceProcess[], limit = 40): string {
  return services
    .flatMap((service) =>
      service.logs.filter((line) => line.level >= 40).map((line) => `${service.name}: ${line.msg} ${String(line.err ?? line.error ?? '')}`),
    )
    .slice(-limit)
    .join('\n');
}

/** The row a fault test adds to docs/reliability.md's table, before the run's name and time. */
export type FaultCells = Omit<FaultRow, 'test' | 'recordedAt'>;

/**
 * Prints a fault's figures on one line, and with FAULT_FIGURES=record saves them as the row `row` of
 * docs/reliability.md's table (test/reliability/results/fault-figures.json).
 */
export function recordFigures(cells: FaultCells): void {
  process.stdout.write(`fault-figures ${JSON.stringify({ row: cells.row, ...cells.figures })}\n`);
  if (process.env.FAULT_FIGURES !== 'record') return;
  const test = path.basename(expect.getState().testPath ?? 'unknown').replace(/\.test\.ts$/, '');
  recordFaultRow({ ...cells, test, recordedAt: new Date().toISOString() });
}

/**
 * A fault's figures as its row: the first attempts' answers (those that got none, when any did, beside
 * the 503s), the rows found and their duplicates, and `recover`, else the extra's recoverySeconds.
 */
export function printFigures(row: string, figures: Figures, extra: Record<string, unknown> = {}, recover?: string): void {
  const { noAnswer } = figures;
  recordFigures({
    row,
    fault: figures.fault,
    sent: figures.sent,
    ok: figures.ok,
    unavailable: noAnswer ? `${figures.unavailable} (${noAnswer.toLocaleString('en-US')} no answer)` : figures.unavailable,
    rows: figures.rows,
    duplicates: figures.duplicates,
    recover: recover ?? (typeof extra.recoverySeconds === 'number' ? String(extra.recoverySeconds) : '–'),
    figures: { ...figures, ...extra },
  });
}

/** What every fault must leave: each post stored once with the values sent, each 200 naming its row. */
export function expectDataKept(figures: Figures): void {
  expect({
    lost: figures.lost,
    wrongValues: figures.wrongValues,
    duplicates: figures.duplicates,
    unconfirmed: figures.unconfirmed,
    rows: figures.rows,
  }).toEqual({ lost: 0, wrongValues: 0, duplicates: 0, unconfirmed: 0, rows: figures.sent });
}

/** The promise every fault test checks: the data is kept, and every answer is a 200 or a JSON 503. */
export function expectPromiseKept(figures: Figures): void {
  expectDataKept(figures);
  expect({ otherStatus: figures.otherStatus, networkErrors: figures.networkErrors, networkFailures: figures.networkFailures }).toEqual({
    otherStatus: 0,
    networkErrors: 0,
    networkFailures: {},
  });
}

/** First attempts that were sent before `time` and answered after it: the work a fault caught in flight. */
export function inFlightAt(posts: Attempted[], time: number): number {
  return posts.filter((post) => {
    const first = post.attempts[0];
    return first !== undefined && first.startedAt < time && first.answeredAt > time;
  }).length;
}

export interface RecoveryOptions {
  /** The body of each probe: a fresh trip location unless told otherwise (e.g. a vehicle group). */
  body?: () => unknown;
  timeoutMs?: number;
}

/**
 * Seconds from the end of a fault until the stack confirms a new write by itself: a fresh probe is
 * posted every 250 ms until one is answered 200. Every probe's answer must be a 200 or a JSON 503, like
 * any other.
 */
export async function secondsToRecover(
  url: UrlOf,
  headers: Record<string, string>,
  faultEndedAt: number,
  { body = () => buildTrip(), timeoutMs = 60_000 }: RecoveryOptions = {},
): Promise<number> {
  const probes: Array<Promise<Attempt>> = [];
  const first: { okAt?: number } = {};
  const giveUpAt = Date.now() + boundedWait(timeoutMs - (Date.now() - faultEndedAt)).ms;
  while (first.okAt === undefined) {
    if (Date.now() > giveUpAt) throw new Error(`the stack did not serve again within ${Date.now() - faultEndedAt} ms of the fault ending`);
    probes.push(
      send(resolveUrl(url), body(), headers).then((attempt) => {
        if (attempt.status === 200) first.okAt = Math.min(first.okAt ?? Infinity, attempt.answeredAt);
        return attempt;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const answers = await Promise.all(probes);
  const improper = answers.filter((attempt) => attempt.status !== 200 && !(attempt.status === 503 && attempt.json));
  if (improper.length) throw new Error(`probes answered neither 200 nor a JSON 503: ${JSON.stringify(improper.slice(0, 3))}`);
  return Math.round((first.okAt - faultEndedAt) / 100) / 10;
}

/** A counter or gauge from a service's /metrics (0 when it has not counted anything yet). */
export async function metricValue(service: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `) || entry.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** Posts a few trips at a time until every writer has stored some, i.e. each owns partitions. */
export async function warmUp(stack: ProcessStack, headers: Record<string, string>, timeoutMs = 45_000): Promise<void> {
  await waitUntil(
    async () => {
      await Promise.all(Array.from({ length: 20 }, () => send(stack.url, buildTrip(), headers)));
      const inserted = await Promise.all(stack.writers.map((writer) => metricValue(writer, 'fleet_writer_rows_inserted_total')));
      return inserted.every((count) => count > 0);
    },
    'every writer to store trips',
    timeoutMs,
    200,
  );
}

/**
 * The longest a stack may take to serve again once a fault is over, from its own settings: a consumer
 * group waits out a member that died (its session), rebalances (within another session), and a request
 * sent meanwhile waits at most its reply timeout. With the defaults, 6 + 6 + 10 s.
 */
export function recoveryBoundSeconds(env: NodeJS.ProcessEnv): number {
  const session = writerConfig(env).KAFKA_SESSION_TIMEOUT_MS;
  const reply = gatewayConfig(env).REPLY_TIMEOUT_MS;
  return (2 * session + reply) / 1000;
}

export async function waitUntil(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000, stepMs = 100): Promise<void> {
  await eventually(probe, timeoutMs, { what, intervalMs: stepMs });
}

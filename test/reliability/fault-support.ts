// What the fault tests share: a stack of real service processes, a bounded load of trip locations,
// the retry of every unconfirmed post with the same body, and the audit that compares what the clients
// were told with what PostgreSQL holds. Each test prints its figures on one line starting with
// "fault-figures", so a run's output can be collected for the README.
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createLogger, dropDatabase, migrate } from '@fleet/shared';
import { baseEnv, buildTrip, db, signToken, testServers, uniquePrefix } from '../support/harness';
import { spawnService, type ServiceProcess } from '../support/processes';

export const TRIP_PATH = '/fleet/api/v1/trip-location';

export interface ProcessStack {
  gateway: ServiceProcess;
  writers: ServiceProcess[];
  env: NodeJS.ProcessEnv;
  prefix: string;
  url: string;
  addWriter(): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  env?: Record<string, string>;
  tripWriters?: number;
}

/** A gateway and trip-writers as separate processes, on topics of their own. */
export async function startProcessStack(label: string, options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const prefix = uniquePrefix(label);
  const env = baseEnv(prefix, {
    LOG_LEVEL: 'info',
    // The mock cluster holds every change of a group's members for a whole session timeout, and a
    // killed writer's partitions wait that long anyway: a short session keeps each fault to seconds.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    ...options.env,
  });
  // One after the other: members joining a group at the same moment make the mock cluster fail a
  // SyncGroup now and then, which only delays the start (the writer replaces the crashed consumer).
  const writers: ServiceProcess[] = [];
  for (let count = 0; count < (options.tripWriters ?? 1); count += 1) writers.push(await spawnService('trip-writer', env));
  const gateway = await spawnService('gateway', env);
  const stack: ProcessStack = {
    gateway,
    writers,
    env,
    prefix,
    url: `${gateway.url}${TRIP_PATH}`,
    async addWriter() {
      const writer = await spawnService('trip-writer', env);
      writers.push(writer);
      return writer;
    },
    async stop() {
      await gateway.stop();
      await Promise.allSettled(writers.map((writer) => writer.stop()));
    },
  };
  return stack;
}

/** A database of the test's own with the schema, for faults that must not reach other tests' connections. */
export async function createPrivateDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(testServers().databaseUrl);
  url.pathname = `${url.pathname}_fault_${randomBytes(3).toString('hex')}`;
  await migrate(url.toString(), createLogger('test-setup', 'warn'));
  return { url: url.toString(), drop: () => dropDatabase(url.toString()) };
}

export interface Attempt {
  status: number | 'network-error';
  /** Date.now() when the request was sent. */
  startedAt: number;
  ms: number;
  id?: number;
  code?: string;
}

export interface Post {
  trip: Record<string, unknown>;
  attempts: Attempt[];
}

export interface Load {
  posts: Post[];
  /** Resolves once every first attempt has been answered. */
  done: Promise<void>;
  /** First attempts answered so far, by outcome. */
  answered(): { total: number; ok: number };
}

export async function authorization(): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await signToken({}, { expiresIn: '1h' })}` };
}

async function send(url: string, trip: Record<string, unknown>, headers: Record<string, string>): Promise<Attempt> {
  const startedAt = Date.now();
  const started = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(trip) });
    const body = (await response.json().catch(() => undefined)) as { data?: { id?: number }; code?: string } | undefined;
    return { status: response.status, startedAt, ms: performance.now() - started, id: body?.data?.id, code: body?.code };
  } catch {
    return { status: 'network-error', startedAt, ms: performance.now() - started };
  }
}

/**
 * Posts `count` trip locations, one every `intervalMs`, each from a device of its own, so that every
 * acknowledged post can be matched to exactly one row.
 */
export function startLoad(url: string, headers: Record<string, string>, count: number, intervalMs: number): Load {
  const posts: Post[] = Array.from({ length: count }, () => ({ trip: buildTrip(), attempts: [] }));
  let total = 0;
  let ok = 0;
  const done = Promise.all(
    posts.map(async (post, index) => {
      await new Promise((resolve) => setTimeout(resolve, index * intervalMs));
      const attempt = await send(url, post.trip, headers);
      post.attempts.push(attempt);
      total += 1;
      if (attempt.status === 200) ok += 1;
    }),
  ).then(() => undefined);
  return { posts, done, answered: () => ({ total, ok }) };
}

/**
 * Posts every trip that has no 200 yet again, with the same body, until each is confirmed or the time
 * is up. Trip locations are idempotent by (imei, gpsTime), so a retry never makes a second row.
 */
export async function retryUnconfirmed(url: string, headers: Record<string, string>, posts: Post[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = posts.filter((post) => post.attempts.at(-1)?.status !== 200);
    if (open.length === 0 || Date.now() > deadline) return;
    // A few at a time, so that the retries themselves are a modest load on a recovering stack.
    for (let start = 0; start < open.length; start += 100) {
      await Promise.all(
        open.slice(start, start + 100).map(async (post) => {
          post.attempts.push(await send(url, post.trip, headers));
        }),
      );
    }
    if (posts.some((post) => post.attempts.at(-1)?.status !== 200)) await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export interface Figures {
  fault: string;
  sent: number;
  ok: number;
  unavailable: number;
  /** The codes of the first 503s, e.g. E-S1/1-02 (no reply in time) or E-S1/1-01 (broker unavailable). */
  unavailableCodes: Record<string, number>;
  otherStatus: number;
  networkErrors: number;
  retries: number;
  rows: number;
  duplicates: number;
  /** Posts answered 200 (first try or retry) without a row holding the returned id. */
  lost: number;
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

/** How many of the posted trips have a row, whatever the answers said. */
export async function storedCount(posts: Post[], pool: Pool = db()): Promise<number> {
  const { rows } = await pool.query<{ count: string }>('SELECT count(*) FROM trip_locations WHERE imei = ANY($1)', [
    posts.map((post) => String(post.trip.imei)),
  ]);
  return Number(rows[0]!.count);
}

/** Compares every answer with the rows stored for the posted devices. */
export async function audit(fault: string, posts: Post[], pool: Pool = db()): Promise<Figures> {
  const imeis = posts.map((post) => String(post.trip.imei));
  const { rows } = await pool.query<{ id: string; imei: string; gps_time: Date }>(
    'SELECT id, imei, gps_time FROM trip_locations WHERE imei = ANY($1)',
    [imeis],
  );
  const rowsByImei = new Map<string, Array<{ id: number; gpsTime: number }>>();
  for (const row of rows) {
    const list = rowsByImei.get(row.imei) ?? [];
    list.push({ id: Number(row.id), gpsTime: row.gps_time.getTime() });
    rowsByImei.set(row.imei, list);
  }

  let lost = 0;
  let duplicates = 0;
  let unconfirmed = 0;
  for (const post of posts) {
    const stored = rowsByImei.get(String(post.trip.imei)) ?? [];
    duplicates += Math.max(0, stored.length - 1);
    const confirmedIds = post.attempts.filter((attempt) => attempt.status === 200).map((attempt) => attempt.id);
    if (confirmedIds.length === 0) unconfirmed += 1;
    const gpsTime = Date.parse(String(post.trip.gpsTime));
    // Every 200 must name the one row of this position, and every retry the same one.
    if (confirmedIds.some((id) => stored.length !== 1 || stored[0]!.id !== id || stored[0]!.gpsTime !== gpsTime)) lost += 1;
  }

  const first = posts.map((post) => post.attempts[0]!);
  const unavailableCodes: Record<string, number> = {};
  for (const attempt of first) {
    if (attempt.status === 503) unavailableCodes[attempt.code ?? 'none'] = (unavailableCodes[attempt.code ?? 'none'] ?? 0) + 1;
  }
  const latencies = first.map((attempt) => attempt.ms).sort((a, b) => a - b);
  return {
    fault,
    sent: posts.length,
    ok: first.filter((attempt) => attempt.status === 200).length,
    unavailable: first.filter((attempt) => attempt.status === 503).length,
    unavailableCodes,
    otherStatus: first.filter((attempt) => typeof attempt.status === 'number' && attempt.status !== 200 && attempt.status !== 503).length,
    networkErrors: first.filter((attempt) => attempt.status === 'network-error').length,
    retries: posts.reduce((sum, post) => sum + post.attempts.length - 1, 0),
    rows: rows.length,
    duplicates,
    lost,
    unconfirmed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: percentile(latencies, 1),
  };
}

/** The warnings and errors the stack's processes logged, for the message of a failed test. */
export function problemsLogged(services: ServiceProcess[], limit = 40): string {
  return services
    .flatMap((service) => service.logs.filter((line) => line.level >= 40).map((line) => `${service.name}: ${line.msg} ${String(line.err ?? line.error ?? '')}`))
    .slice(-limit)
    .join('\n');
}

/** One line per fault, collected from a run's output for the README. */
export function printFigures(figures: Figures, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`fault-figures ${JSON.stringify({ ...figures, ...extra })}\n`);
}

/** The promise every fault test checks: nothing acknowledged is lost, nothing is stored twice. */
export function expectPromiseKept(figures: Figures): void {
  expect({
    lost: figures.lost,
    duplicates: figures.duplicates,
    unconfirmed: figures.unconfirmed,
    rows: figures.rows,
    otherStatus: figures.otherStatus,
    networkErrors: figures.networkErrors,
  }).toEqual({ lost: 0, duplicates: 0, unconfirmed: 0, rows: figures.sent, otherStatus: 0, networkErrors: 0 });
}

/** A counter from a writer's /metrics (0 when it has not counted anything yet). */
export async function writerCounter(writer: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(`${writer.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `) || entry.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** Posts a few trips at a time until every writer has stored some, i.e. each owns partitions. */
export async function warmUp(stack: ProcessStack, headers: Record<string, string>, timeoutMs = 45_000): Promise<void> {
  await waitUntil(
    async () => {
      await Promise.all(Array.from({ length: 20 }, () => send(stack.url, buildTrip(), headers)));
      const inserted = await Promise.all(stack.writers.map((writer) => writerCounter(writer, 'fleet_writer_rows_inserted_total')));
      return inserted.every((count) => count > 0);
    },
    'every writer to store trips',
    timeoutMs,
    200,
  );
}

export async function waitUntil(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000, stepMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

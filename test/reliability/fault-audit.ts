// The audit of a fault test: what the clients were told against what PostgreSQL holds and what the
// writers replied, as figures each test prints on one line starting with "fault-figures" and records
// for the docs.
import path from 'node:path';
import { Pool } from 'pg';
import { headers as kafkaHeaders } from '@fleet/shared/kafka/topics';
import { PROBE_HEADER } from '../../shared/write-path/src/kafka/reply-listener';
import { db, storedTripCount } from '../support/harness';
import { messagesIn, readTopic } from '../support/kafka';
import { recordFaultRow, type FaultRow } from '../support/fault-figures';
import type { Attempted, GroupPost, Post } from './fault-load';
import { type LogLine, type ServiceProcess } from '../support/processes';

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

const isProblem = (line: LogLine) => line.level >= 40;
/** A logged error as text: a message logged as `err`, or the message and first frame of a serialized Error. */
function errorText(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error ?? '');
  const { message, stack } = error as { message?: unknown; stack?: unknown };
  const frame = typeof stack === 'string' ? stack.split('\n').find((line) => line.trim().startsWith('at ')) : undefined;
  return [String(message ?? JSON.stringify(error)), frame?.trim()].filter(Boolean).join(' ');
}
const problemText = (service: ServiceProcess, line: LogLine) => `${service.name}: ${line.msg} ${errorText(line.err ?? line.error)}`;

/** The warnings and errors the stack's processes logged, for the message of a failed test. */
export function problemsLogged(services: ServiceProcess[], limit = 40): string {
  return services
    .flatMap((service) => service.logs.filter(isProblem).map((line) => problemText(service, line)))
    .slice(-limit)
    .join('\n');
}

/**
 * The warnings and errors logged from `from` on, each text once in the order it first came, with its
 * time after `from`, and how often and until when it came again: where a stall went, in few lines.
 */
export function problemsLoggedSince(services: ServiceProcess[], from: number): string {
  const seen = new Map<string, { first: number; last: number; times: number }>();
  const lines = services
    .flatMap((service) =>
      service.logs.filter(isProblem).map((line) => ({ at: Date.parse(String(line.time)) - from, text: problemText(service, line) })),
    )
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at);
  for (const { at, text } of lines) {
    const known = seen.get(text);
    if (known) Object.assign(known, { last: at, times: known.times + 1 });
    else seen.set(text, { first: at, last: at, times: 1 });
  }
  return [...seen]
    .map(([text, { first, last, times }]) => `+${first} ms ${text}${times > 1 ? ` (${times} times, the last at +${last} ms)` : ''}`)
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

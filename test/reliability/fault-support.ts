// What the fault tests share besides the stack, the load and the audit: the time the stack takes to
// serve again, and the waits a fault test needs.
import { writerConfig } from '@fleet/shared/writer-service';
import { gatewayConfig } from '@fleet/gateway';
import { buildTrip } from '../support/harness';
import { boundedWait } from '../support/deadline';
import { eventually } from '../support/eventually';
import { resolveUrl, send, type Attempt, type Attempted, type UrlOf } from './fault-load';
import type { ProcessStack } from '../support/process-stack';
import { type ServiceProcess } from '../support/processes';

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
  await eventually(
    async () => {
      await Promise.all(Array.from({ length: 20 }, () => send(stack.url, buildTrip(), headers)));
      const inserted = await Promise.all(stack.writers.map((writer) => metricValue(writer, 'fleet_writer_rows_inserted_total')));
      return inserted.every((count) => count > 0);
    },
    timeoutMs,
    { what: 'every writer to store trips', intervalMs: 200 },
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

// Paced load: each target gets its requests at evenly spaced moments, a fixed number a second, each
// sent whether or not the ones before it have been answered, as devices report on their own schedules.
//
// The scale-out scenario needs this rather than autocannon. At a fixed concurrency the load a gateway
// carries follows its latency, so a step's CPU per create followed the host's latency of the moment;
// and autocannon's own rate limit sends each second's quota back to back and then waits, every
// connection at the same moments, a burst that is not what instances see as an autoscaler holds them.
//
// Requests go over a bounded pool of keep-alive connections per target, as a fleet's load balancer
// holds them: a request due while all are busy waits its turn (its latency counts from when it was
// due). With fetch's unbounded pool, a rate beyond what the stack answers opened a connection per
// request, thousands, and the load generator took a core of its own from the stack it measured.

import http from 'node:http';
import { quantileMs } from './teltonika-load';

/** The figures of one paced run, in the shape of autocannon's that the bench reads. */
export interface PacedResult {
  /** Requests answered, and their number a second of the paced window (the rate asked when all were). */
  requests: { total: number; average: number };
  latency: { p50: number; p99: number };
  /** Requests that failed without an answer (a refused or reset connection). */
  errors: number;
  /** Requests unanswered after `timeoutMs`. */
  timeouts: number;
  /** Requests answered with any status but 200. */
  non2xx: number;
}

export interface PacedRequest {
  method: 'GET' | 'POST';
  path: () => string;
  headers: () => Record<string, string>;
  body?: () => string;
  /** Sees each 200's body. */
  answered?: (body: string) => void;
}

export interface PacedOptions {
  /** Requests a second sent to each URL. */
  ratePerUrl: number;
  seconds: number;
  /** How long a request may wait for its answer before it counts as a timeout; autocannon's default. */
  timeoutMs?: number;
  /** Keep-alive connections to each target. */
  connections?: number;
}

class Timeout extends Error {}

/** One request over `agent`'s connections; its answer's status and body. */
function send(agent: http.Agent, url: string, request: PacedRequest, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(`${url}${request.path()}`, { method: request.method, headers: request.headers(), agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    const timer = setTimeout(() => outgoing.destroy(new Timeout()), timeoutMs);
    outgoing.on('close', () => clearTimeout(timer));
    outgoing.on('error', reject);
    outgoing.end(request.body?.());
  });
}

/**
 * Sends `ratePerUrl × seconds` requests to each URL, the k-th at k / ratePerUrl seconds after the start,
 * the URLs offset from each other by a share of the interval so that they do not all send at once; and
 * resolves once every request has been answered or timed out, so that none is left in flight for
 * whatever runs next.
 */
export async function pacedLoad(urls: string[], request: PacedRequest, options: PacedOptions): Promise<PacedResult> {
  const { ratePerUrl, seconds, timeoutMs = 10_000, connections = 64 } = options;
  const perUrl = Math.round(ratePerUrl * seconds);
  const intervalMs = 1000 / ratePerUrl;
  const latencies: number[] = [];
  const result: PacedResult = { requests: { total: 0, average: 0 }, latency: { p50: 0, p99: 0 }, errors: 0, timeouts: 0, non2xx: 0 };
  const inFlight: Array<Promise<void>> = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

  const sendOne = async (url: string) => {
    const sentAt = performance.now();
    try {
      const { status, body } = await send(agent, url, request, timeoutMs);
      latencies.push(performance.now() - sentAt);
      result.requests.total += 1;
      if (status === 200) request.answered?.(body);
      else result.non2xx += 1;
    } catch (error) {
      if (error instanceof Timeout) result.timeouts += 1;
      else result.errors += 1;
    }
  };

  const startedAt = performance.now();
  await Promise.all(
    urls.map(async (url, index) => {
      const offsetMs = (intervalMs * index) / urls.length;
      for (let sent = 0; sent < perUrl; sent += 1) {
        const dueMs = startedAt + offsetMs + sent * intervalMs - performance.now();
        if (dueMs > 0) await new Promise((resolve) => setTimeout(resolve, dueMs));
        inFlight.push(sendOne(url));
      }
    }),
  );
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  result.requests.average = result.requests.total / seconds;
  result.latency = { p50: quantileMs(latencies, 0.5), p99: quantileMs(latencies, 0.99) };
  return result;
}

// The scale-out scenario's extra processes: more gateways and trip-writers beside the ones the launcher
// started (one more of each for 2 + 2, two more again for 4 + 4), and the wait until all carry their
// share of the work.
//
// Each is a twin of the launcher's own process: the same command line (Node.js's flags, those of
// STACK_NODE_ARGS, the built entry point) and the same environment, read back from /proc, with only its
// port changed. Rebuilt from the bench's settings instead, it would have to repeat what the launcher
// adds (the broker it chose, that broker's client settings, the services' V8 flags) and could drift
// from it; a copy cannot.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The scale-out scenario's two measurements, one right after the other, in the bench's table. */
export const SCALE_OUT_ONE = 'scale-out: 1 gateway + 1 trip-writer, trip create JSON';
export const SCALE_OUT_TWO = 'scale-out: 2 gateways + 2 trip-writers, trip create JSON';
export const SCALE_OUT_FOUR = 'scale-out: 4 gateways + 4 trip-writers, trip create JSON';

/** A /proc file of NUL-terminated strings (cmdline, environ), as its strings. */
export function nulSeparated(text: string): string[] {
  return text.split('\0').filter((part) => part !== '');
}

/** /proc/<pid>/environ as variables; a value may itself hold '='. */
export function environOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of nulSeparated(text)) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return env;
}

/**
 * The sum of a metric's samples in a Prometheus text exposition whose labels include `labels`; 0 when
 * there is none.
 */
export function sampleSum(exposition: string, metric: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (match?.[1] !== metric) continue;
    const found = new Map(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([name, value]) => found.get(name) === value)) sum += Number(match[3]);
  }
  return sum;
}

/**
 * The POST requests a gateway has answered 200, from its /metrics: with connections split evenly over
 * two gateways, each answers as many as its own latency lets them send, so the split of requests is its
 * own figure. The scrape itself is a GET and is not counted; nor are the requests a load generator
 * abandons in flight when its run ends, which the gateway records as 499.
 */
export async function postsAnswered(gatewayUrl: string): Promise<number> {
  const response = await fetch(`${gatewayUrl}/metrics`);
  if (!response.ok) throw new Error(`GET ${gatewayUrl}/metrics answered ${response.status}`);
  return sampleSum(await response.text(), 'fleet_http_request_duration_seconds_count', { method: 'POST', status: '200' });
}

/** Commands a gateway holds waiting for a writer's reply; 0 from a server without the gauge (a baseline). */
export async function pendingReplies(gatewayUrl: string): Promise<number> {
  const response = await fetch(`${gatewayUrl}/metrics`);
  if (!response.ok) return 0;
  return sampleSum(await response.text(), 'fleet_kafka_pending_replies');
}

/** Starts a copy of a running process, its environment changed by `overrides`. */
export function startTwin(pid: number, overrides: Record<string, string>): ChildProcess {
  const [command, ...args] = nulSeparated(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  if (!command) throw new Error(`process ${pid} has no command line to copy`);
  return spawn(command, args, {
    env: { ...environOf(readFileSync(`/proc/${pid}/environ`, 'utf8')), ...overrides },
    // The IPC channel, as the launcher gives its own: the service stops when the bench is gone, even
    // if the bench dies before it could stop it.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Polls `check` until it holds; fails when it throws, as soon as one of `children` exits, or at the deadline. */
async function waitFor(what: string, check: () => Promise<boolean>, children: ChildProcess[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = children.find((child) => child.exitCode !== null || child.signalCode !== null);
    if (exited) throw new Error(`a scale-out process exited (${exited.exitCode ?? exited.signalCode}) while waiting for ${what}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const READY_TIMEOUT_MS = 90_000;
/** A joining member waits for the others to rejoin on their next heartbeat; a minute is ample. */
const REBALANCE_TIMEOUT_MS = 60_000;
const CREATES_PER_ROUND = 10;

export interface ScaleOut {
  /** The gateways added. */
  gatewayUrls: string[];
  gatewayPids: number[];
  tripWriterPids: number[];
  /** Stops them all and waits for their exit; a no-op once they are gone. */
  stop(): Promise<void>;
}

export interface ScaleOutOptions {
  /** The processes the launcher started, to copy. */
  gatewayPid: number;
  tripWriterPid: number;
  /** The gateways already serving. */
  gatewayUrls: string[];
  /** Free ports on this machine, two for each twin pair: its gateway's and its trip-writer's metrics. */
  ports: number[];
  /** Posts one trip create through a gateway and answers its status. */
  create: (gatewayUrl: string) => Promise<number>;
  /** Settings every twin gets beside its ports (another broker, for one). */
  env?: Record<string, string>;
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Starts a gateway and a trip-writer for each two ports given, and returns once all serve: the gateways
 * are ready, and trip creates posted through every gateway have been stored by each new trip-writer
 * too, which it does only once the consumer group has rebalanced and handed it its share of the
 * partitions. Every create posted meanwhile must be answered 200.
 */
export async function startScaleOut(options: ScaleOutOptions): Promise<ScaleOut> {
  const pairs = Array.from({ length: options.ports.length / 2 }, (_, i) => [options.ports[2 * i]!, options.ports[2 * i + 1]!] as const);
  const gateways = pairs.map(([gatewayPort]) => startTwin(options.gatewayPid, { ...options.env, PORT: String(gatewayPort) }));
  const tripWriters = pairs.map(([, metricsPort]) =>
    startTwin(options.tripWriterPid, { ...options.env, METRICS_PORT: String(metricsPort) }),
  );
  const children = [...gateways, ...tripWriters];
  const stop = () => Promise.all(children.map(stopProcess)).then(() => undefined);
  try {
    const gatewayUrls = pairs.map(([gatewayPort]) => `http://127.0.0.1:${gatewayPort}`);
    // No port listens at first: a refused connection is "not yet".
    const ready = (url: string) =>
      fetch(`${url}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
    await waitFor(
      'the new gateways to be ready',
      async () => (await Promise.all(gatewayUrls.map(ready))).every(Boolean),
      children,
      READY_TIMEOUT_MS,
    );
    const stored = (metricsPort: number) =>
      fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
        async (response) => (response.ok ? sampleSum(await response.text(), 'fleet_writer_rows_inserted_total') : 0),
        () => 0,
      );
    await waitFor(
      'the new trip-writers to store positions',
      async () => {
        const statuses = await Promise.all(
          [...options.gatewayUrls, ...gatewayUrls].flatMap((url) => Array.from({ length: CREATES_PER_ROUND }, () => options.create(url))),
        );
        const refused = statuses.filter((status) => status !== 200);
        if (refused.length > 0) throw new Error(`trip creates answered ${refused.join(', ')} while the group rebalanced`);
        return (await Promise.all(pairs.map(([, metricsPort]) => stored(metricsPort)))).every((count) => count > 0);
      },
      children,
      REBALANCE_TIMEOUT_MS,
    );
    return { gatewayUrls, gatewayPids: gateways.map((child) => child.pid!), tripWriterPids: tripWriters.map((child) => child.pid!), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// One measured scenario: its load after a warm-up, the replies settled, and the CPU every process spent
// per request (or per position) over the measured run.
import { pendingReplies } from './scale-out';
import {
  CPU_PARTS,
  cpuBetween,
  cpuSnapshot,
  perUnit,
  processCpuBetween,
  type CpuPart,
  type CpuPerRequest,
  type CpuSeconds,
  type CpuSources,
} from './process-cpu';
import type { BenchOptions, ScenarioResult } from './bench-types';
import { drive, type Drive, type LoadRequest } from './load-driver';

export type Measured = Omit<
  ScenarioResult,
  'baseline' | 'ratio' | 'cpuMicrosPerRequest' | 'cpuMicrosPerPosition' | 'cpuMicrosPerRequestByProcess'
> & {
  cpu: CpuSeconds;
  /** Requests answered in the measured window. */
  answered: number;
  /** CPU seconds of each process `CpuOf.processes` names. */
  cpuByProcess?: Record<string, number | null>;
};

/** The console's short form of a scenario's CPU; `server` names what the `gateway` part is. */
export function cpuSummary(cpu: CpuPerRequest, server: string): string {
  const label = (part: CpuPart) => (part === 'gateway' ? server : part === 'loadGenerator' ? 'load' : part);
  const parts = CPU_PARTS.filter((part) => cpu[part] !== null).map((part) => `${label(part)} ${Math.round(cpu[part]!)}`);
  return `CPU ${Math.round(cpu.total)} µs/req (${parts.join(', ')})`;
}

/** One process's CPU seconds as µs per request answered, as `perUnit` gives each part's. */
export const microsPerRequest = (seconds: number | null, answered: number) =>
  seconds === null || answered <= 0 ? null : (seconds * 1e6) / answered;

/** The processes whose CPU a scenario counts, and what its `gateway` part is (a baseline server stands in for it). */
export interface CpuOf {
  sources: CpuSources;
  server: 'gateway' | 'server';
  /** Processes whose CPU is also reported one by one, by label: those of a part run by several. */
  processes?: Record<string, number>;
}

/** Reads each of several counters at once, by label. */
export async function readCounters(counters: Record<string, () => Promise<number>>): Promise<Record<string, number>> {
  return Object.fromEntries(await Promise.all(Object.entries(counters).map(async ([label, read]) => [label, await read()])));
}

/** How long the gateways may take to answer what a warm-up left in flight. */
export const SETTLE_TIMEOUT_MS = 15_000;

/**
 * Waits until no command waits for its reply at any of the gateways. autocannon ends a run without
 * waiting for the requests it has in flight, whose commands the gateway still holds: the measured run
 * would start on top of them, and 64 batches of 100 positions left by the warm-up plus the first 64 of
 * the run were over the gateway's MAX_IN_FLIGHT of 10,000.
 */
export async function repliesSettled(url: string | string[]): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (const gatewayUrl of [url].flat()) {
    while ((await pendingReplies(gatewayUrl)) > 0) {
      if (Date.now() > deadline) throw new Error(`${gatewayUrl} still holds commands waiting for replies after ${SETTLE_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Measures after the warm-up, with the CPU of the processes `sources` names read around the measured
 * window, and `gateways`' counters of requests answered, by label, where the load is split over several.
 */
export async function measure(
  name: string,
  url: string | string[],
  request: LoadRequest,
  options: BenchOptions,
  how: Drive,
  cpuOf: CpuOf,
  gateways?: Record<string, () => Promise<number>>,
): Promise<Measured> {
  if (options.warmupSeconds > 0) {
    await drive(url, request, how, options.warmupSeconds);
    await repliesSettled(url);
  }
  await request.warmedUp?.();
  const countedBefore = gateways && (await readCounters(gateways));
  const before = cpuSnapshot(cpuOf.sources);
  const { result, refused } = await drive(url, request, how, options.durationSeconds);
  const after = cpuSnapshot(cpuOf.sources);
  const countedAfter = gateways && (await readCounters(gateways));
  const requestsByGateway =
    countedBefore && countedAfter
      ? Object.fromEntries(Object.entries(countedAfter).map(([label, count]) => [label, count - countedBefore[label]!]))
      : undefined;
  const cpu = cpuBetween(before, after);
  const cpuByProcess = cpuOf.processes
    ? Object.fromEntries(Object.entries(cpuOf.processes).map(([label, pid]) => [label, processCpuBetween(before, after, pid)]))
    : undefined;
  const errors = result.errors + result.timeouts + result.non2xx + refused;
  const byProcess = Object.entries(cpuByProcess ?? {}).map(([label, seconds]) => {
    const micros = microsPerRequest(seconds, result.requests.total);
    return `${label} ${micros === null ? 'n/a' : Math.round(micros)}`;
  });
  const byGateway = Object.entries(requestsByGateway ?? {}).map(([label, count]) => `${label} ${count}`);
  process.stderr.write(
    `  ${name}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ${errors} errors, ` +
      `${cpuSummary(perUnit(cpu, result.requests.total), cpuOf.server)}` +
      `${byProcess.length ? `; by process ${byProcess.join(', ')}` : ''}` +
      `${byGateway.length ? `; requests answered by ${byGateway.join(', ')}` : ''}\n`,
  );
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors,
    ...(request.positions ? { positionsPerSecond: result.requests.average * request.positions } : {}),
    cpu,
    answered: result.requests.total,
    ...(cpuByProcess ? { cpuByProcess } : {}),
    ...(requestsByGateway ? { requestsByGateway } : {}),
  };
}

/** A scenario's CPU per request, per position for a batch, and per process where several are told apart. */
export function cpuPerRequest(
  { cpu, answered, cpuByProcess }: Pick<Measured, 'cpu' | 'answered' | 'cpuByProcess'>,
  positions?: number,
): Pick<ScenarioResult, 'cpuMicrosPerRequest' | 'cpuMicrosPerPosition' | 'cpuMicrosPerRequestByProcess'> {
  return {
    cpuMicrosPerRequest: perUnit(cpu, answered),
    // A request of one position: per position would only repeat per request.
    ...(positions && positions > 1 ? { cpuMicrosPerPosition: perUnit(cpu, answered * positions) } : {}),
    ...(cpuByProcess
      ? {
          cpuMicrosPerRequestByProcess: Object.fromEntries(
            Object.entries(cpuByProcess).map(([label, seconds]) => [label, microsPerRequest(seconds, answered)]),
          ),
        }
      : {}),
  };
}

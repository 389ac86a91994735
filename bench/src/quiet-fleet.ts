// The quiet fleet: most fleets are small or quiet most of the day, so the stack's CPU must follow the
// load rather than the passage of time. Measured at rest and at a few paced rates of trip creates (each
// from a device of its own, as a fleet reports), with each process's CPU as a share of one core, and
// fitted as a fixed cost plus a cost per create: what a capacity plan needs, from the rates it plans for.
import { cpuBetween, cpuSnapshot, processCpuSeconds, type CpuPart, type CpuSources } from './process-cpu';
import { drive, type LoadRequest, type Running } from './load-driver';
import { pacedLoad } from './paced-load';
import { requestsBetween, type RequestCounts } from './kafka-tools';

/** Creates a second of each step; 0 is the stack at rest. */
export const QUIET_FLEET_RATES = [0, 50, 150, 500] as const;
/** The whole stack's CPU at rest and at 50 creates a second, in cores, at most. */
export const QUIET_FLEET_TARGETS = { restCores: 0.1, fiftyCores: 0.3 } as const;

export type QuietPart = Exclude<CpuPart, 'loadGenerator'> | 'teltonika' | 'event-processor';

export interface QuietFleetStep {
  /** Creates a second asked. */
  rate: number;
  seconds: number;
  /** Creates answered 200, and the rest. */
  answered: number;
  errors: number;
  p99Ms: number | null;
  /** Each process's CPU as a share of one core over the step; null where it was not found. */
  cores: Record<QuietPart, number | null>;
  /** The stack's CPU in all, in cores. */
  totalCores: number;
  /** Requests a second the broker handled over the step, by API; absent where it was not read. */
  brokerRequestsPerSecond?: RequestCounts | null;
}

export interface QuietFleetFit {
  /** The stack's CPU with nothing to do, in cores (the fit's intercept). */
  fixedCores: number;
  /** CPU per create beyond it, in µs (the fit's slope). */
  perCreateMicros: number;
}

/** Least squares of the total cores on the rate: a fixed cost and a cost per create. */
export function fitQuietFleet(steps: readonly Pick<QuietFleetStep, 'rate' | 'totalCores'>[]): QuietFleetFit {
  const n = steps.length;
  const meanRate = steps.reduce((sum, step) => sum + step.rate, 0) / n;
  const meanCores = steps.reduce((sum, step) => sum + step.totalCores, 0) / n;
  const spread = steps.reduce((sum, step) => sum + (step.rate - meanRate) ** 2, 0);
  const slope = spread === 0 ? 0 : steps.reduce((sum, step) => sum + (step.rate - meanRate) * (step.totalCores - meanCores), 0) / spread;
  return { fixedCores: meanCores - slope * meanRate, perCreateMicros: slope * 1e6 };
}

/**
 * The host's price of a quiet request, measured in the same run: a bare express server's CPU per request
 * at the rate of the 50-a-second step. A process's sleep and wake-up is most of what a request costs at
 * that rate, and on this kind of host it moves every figure of the table by half from one day to the
 * next; the stack's cost per create as a multiple of it is what compares from run to run.
 */
export interface HostYardstick {
  /** Requests a second. */
  rate: number;
  microsPerRequest: number;
}

/** The rate the yardstick is measured at: that of the 50-a-second target. */
export const YARDSTICK_RATE = 50;

/** The yardstick on `server` (bench/src/hello-world.ts), after a warm-up at ten times its rate. */
export async function measureYardstick(server: Running, seconds: number): Promise<HostYardstick> {
  const { pid } = server.process;
  if (pid === undefined) throw new Error('the yardstick server did not start');
  const rate = YARDSTICK_RATE;
  const request = { method: 'GET' as const, path: () => '/', headers: () => ({}) };
  await pacedLoad([server.url], request, { ratePerUrl: rate * 10, seconds: Math.min(seconds, 10) });
  const before = processCpuSeconds(pid);
  const result = await pacedLoad([server.url], request, { ratePerUrl: rate, seconds });
  const after = processCpuSeconds(pid);
  if (before === null || after === null) throw new Error('the yardstick server is gone');
  const answered = result.requests.total - result.non2xx;
  if (answered === 0) throw new Error('the yardstick server answered nothing');
  return { rate, microsPerRequest: ((after - before) * 1e6) / answered };
}

export interface QuietFleetOptions {
  gatewayUrl: string;
  /** A trip create from a device of its own each time. */
  request: LoadRequest;
  /** The processes of each part; the Teltonika listener's and the event processor's as parts of their own. */
  sources: CpuSources & { teltonika: () => number[]; 'event-processor': () => number[] };
  seconds: number;
  /** Rest after each step before the next is measured, so that one step's tail is not the next's. */
  settleSeconds?: number;
  rates?: readonly number[];
  /** The broker's requests handled so far, by API (its MBeans), read around each step. */
  brokerRequests?: () => RequestCounts | null;
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs every step in turn, the stack at rest first. */
export async function measureQuietFleet(options: QuietFleetOptions): Promise<QuietFleetStep[]> {
  const { seconds, settleSeconds = 5, rates = QUIET_FLEET_RATES, log } = options;
  const steps: QuietFleetStep[] = [];
  for (const rate of rates) {
    await sleep(settleSeconds * 1000);
    const requestsBefore = options.brokerRequests?.();
    const before = cpuSnapshot(options.sources);
    const startedAt = performance.now();
    const result = rate === 0 ? undefined : (await drive(options.gatewayUrl, options.request, { ratePerUrl: rate }, seconds)).result;
    if (rate === 0) await sleep(seconds * 1000);
    const elapsed = (performance.now() - startedAt) / 1000;
    const cpu = cpuBetween(before, cpuSnapshot(options.sources));
    const requests = options.brokerRequests ? requestsBetween(requestsBefore ?? null, options.brokerRequests()) : undefined;
    const cores = {} as Record<QuietPart, number | null>;
    let totalCores = 0;
    for (const part of Object.keys(options.sources) as QuietPart[]) {
      const used = (cpu as Record<string, number | null>)[part] ?? null;
      cores[part] = used === null ? null : used / elapsed;
      totalCores += cores[part] ?? 0;
    }
    const step: QuietFleetStep = {
      rate,
      seconds: elapsed,
      answered: result ? result.requests.total - result.non2xx : 0,
      errors: result ? result.errors + result.timeouts + result.non2xx : 0,
      p99Ms: result ? result.latency.p99 : null,
      cores,
      totalCores,
      ...(requests === undefined
        ? {}
        : {
            brokerRequestsPerSecond: requests && Object.fromEntries(Object.entries(requests).map(([api, count]) => [api, count / elapsed])),
          }),
    };
    const parts = Object.entries(cores).map(([part, used]) => `${part} ${used === null ? 'n/a' : `${(used * 100).toFixed(1)}%`}`);
    log?.(
      `  quiet fleet at ${rate} creates/s: ${(totalCores * 100).toFixed(1)}% of a core (${parts.join(', ')})` +
        `${result ? `, p99 ${step.p99Ms} ms, ${step.errors} errors` : ''}`,
    );
    steps.push(step);
  }
  return steps;
}

/** docs/performance.md's quiet-fleet figures, from bench/results/quiet-fleet.json. */
export const QUIET_FLEET_SECTION = {
  start: '<!-- quiet fleet: written by `npm run bench:quiet` from bench/results/quiet-fleet.json; do not edit by hand -->',
  end: '<!-- end of quiet fleet -->',
};

const percent = (cores: number | null) => (cores === null ? 'n/a' : `${(cores * 100).toFixed(1)}%`);

/** The steps as a table of CPU shares of one core, the fit, and the targets met or missed. */
export function quietFleetTable(report: {
  startedAt: string;
  steps: QuietFleetStep[];
  fit: QuietFleetFit;
  yardstick?: HostYardstick;
}): string {
  const parts = Object.keys(report.steps[0]?.cores ?? {}) as QuietPart[];
  const rows = report.steps.map(
    (step) =>
      `| ${step.rate === 0 ? 'at rest' : `${step.rate} creates/s`} | ${parts.map((part) => percent(step.cores[part])).join(' | ')} | ` +
      `${percent(step.totalCores)} | ${step.rate === 0 ? '' : Math.round((step.totalCores * 1e6) / step.rate)} | ${step.p99Ms ?? ''} | ${step.errors} |`,
  );
  const rest = report.steps.find((step) => step.rate === 0);
  const fifty = report.steps.find((step) => step.rate === 50);
  const yardstick = report.yardstick;
  const paced = yardstick && report.steps.find((step) => step.rate === yardstick.rate);
  const yardstickLine = yardstick
    ? `Host yardstick, in this run: a bare express server used ${Math.round(yardstick.microsPerRequest)} µs of CPU a request at ` +
      `${yardstick.rate} requests a second` +
      (paced
        ? `; a create at ${paced.rate} a second cost the stack ${((paced.totalCores * 1e6) / paced.rate / yardstick.microsPerRequest).toFixed(1)} times that.`
        : '.')
    : undefined;
  const verdict = (value: number | undefined, goal: number) =>
    value === undefined ? 'not measured' : `${percent(value)} (goal <= ${percent(goal)}): ${value <= goal ? 'met' : 'MISSED'}`;
  const requestLines = report.steps
    .filter((step) => step.brokerRequestsPerSecond)
    .map((step) => {
      const perSecond = Object.entries(step.brokerRequestsPerSecond!);
      const label = step.rate === 0 ? 'at rest' : `at ${step.rate} creates/s`;
      const perCreate =
        step.rate === 0
          ? ''
          : ` (${(perSecond.reduce((sum, [api, count]) => sum + (api.startsWith('Fetch') && api !== 'Fetch' ? 0 : count), 0) / step.rate).toFixed(1)} a create)`;
      return `- ${label}${perCreate}: ${perSecond.map(([api, count]) => `${api} ${count.toFixed(1)}`).join(', ')}`;
    });
  return [
    `Run of ${report.startedAt}: CPU as a share of one core, per process`,
    '',
    `| load | ${parts.join(' | ')} | whole stack | µs per create | p99 (ms) | errors |`,
    `|---|${parts.map(() => '---:').join('|')}|---:|---:|---:|---:|`,
    ...rows,
    '',
    `Fitted over the steps: ${percent(report.fit.fixedCores)} of a core fixed, plus ${Math.round(report.fit.perCreateMicros)} µs per create.`,
    '',
    ...(yardstickLine ? [yardstickLine, ''] : []),
    `- at rest: ${verdict(rest?.totalCores, QUIET_FLEET_TARGETS.restCores)}`,
    `- 50 creates a second: ${verdict(fifty?.totalCores, QUIET_FLEET_TARGETS.fiftyCores)}`,
    ...(requestLines.length > 0
      ? ['', 'Requests a second the broker handled, by API (FetchConsumer and FetchFollower are kinds of Fetch):', '', ...requestLines]
      : []),
  ].join('\n');
}

// The benchmark: brings up the stack as production runs it (separate processes) beside two baselines,
// drives each with autocannon at a fixed concurrency, and reports every rate as a ratio to a bare
// express hello-world measured in the same run, so figures compare across machines. A shared host's
// speed drifts within a run (hello-world alone moved from 4,200 to 5,600 req/s between runs minutes
// apart), so hello-world is measured before and after each scenario, and each ratio is to the mean of
// the two runs around it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { Pool } from 'pg';
import { dropDatabase, ensureDatabase } from '@fleet/shared/db/pool';
import { lastRunBeforePartitioning } from './history';
import { benchTargets, MANY_DEVICES_BATCH, ratioTo } from './targets';
import { quantileMs, teltonikaLoad } from './teltonika-load';
import { followedDevices, LiveStreams, LIVE_STREAMS_SCENARIO, type StreamDelay } from './live-streams';
import { capacityModel, type CapacityModel } from './capacity';
import { pacedLoad } from './paced-load';
import { startReplicated, type Replicated } from './replicated';
import {
  pendingReplies,
  postsAnswered,
  REPLICATED_SCENARIO,
  SCALE_OUT_FOUR,
  SCALE_OUT_ONE,
  SCALE_OUT_TWO,
  startScaleOut,
  type ScaleOut,
} from './scale-out';
import {
  addCpu,
  CPU_PARTS,
  cpuBetween,
  cpuSnapshot,
  localBrokerPid,
  perUnit,
  postgresPids,
  processCpuBetween,
  type CpuPart,
  type CpuPerRequest,
  type CpuSeconds,
  type CpuSources,
} from './process-cpu';
import {
  DAY_MS,
  ensureDailyPartitions,
  generateVolume,
  isTripLocationsPartitioned,
  volumeImei,
  type Volume,
  type VolumeSize,
} from './volume';

/** Trip creates sent before the first scenario, so that no scenario measures the broker's JIT warm-up. */
const WRITE_PATH_WARMUP_SECONDS = 20;
/** How long a followed create's event may take to arrive before the bench counts it missing. */
const STREAM_SETTLE_MS = 10_000;

export const repoRoot = path.resolve(__dirname, '..', '..');
/** The baselines run compiled, as the services do, whether this module runs compiled or under jest. */
const baselinesDir = path.join(repoRoot, 'bench', 'dist');

export interface BenchOptions {
  connections: number;
  /**
   * The scale-out scenario's trip creates a second for each gateway, paced: 1 + 1 gets this many, 2 + 2
   * twice, 4 + 4 four times, so that every instance carries the same load in each step.
   */
  scaleOutRate: number;
  durationSeconds: number;
  warmupSeconds: number;
  databaseUrl: string;
  /** A stack already running elsewhere (its gateway URL), instead of starting one. */
  targetUrl?: string;
  apiKey?: string;
  jwtSecret?: string;
  /** Brokers for the started stack; unset, it runs on the local Apache Kafka that `npm start` starts. */
  kafkaBrokers?: string;
  /** The positions generated in the database before the scenarios run. */
  volume: VolumeSize;
  /** Earlier runs, oldest first (bench/results/history.jsonl), to hold this run's trip creates against. */
  history?: BenchReport[];
}

export interface ScenarioResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** For a scenario counted in positions (a batch, the scale-out's creates): positions stored per second. */
  positionsPerSecond?: number;
  /** The mean of the hello-world runs just before and just after this scenario (for hello-world: of all its runs). */
  baseline: { requestsPerSecond: number; p99Ms: number };
  ratio: number;
  /** CPU of each process over the measured window, per request answered in it (hello-world: over all its runs). */
  cpuMicrosPerRequest: CpuPerRequest;
  /** For a scenario posting many positions per request: the same per position. */
  cpuMicrosPerPosition?: CpuPerRequest;
  /** For a part run by several processes (the scale-out's): each process's CPU per request, by its label. */
  cpuMicrosPerRequestByProcess?: Record<string, number | null>;
  /** For a load split over several gateways (the scale-out's): the requests each answered in the measured window. */
  requestsByGateway?: Record<string, number>;
  /** For creates followed on live streams: the delay from each post's 200 to its event. */
  streamDelay?: StreamDelay;
}

export interface Target {
  what: string;
  value: number;
  target: string;
  /** Null for a figure reported for information, against no goal. */
  met: boolean | null;
}

export interface BenchReport {
  startedAt: string;
  /** The Kafka the stack ran on, as its launcher named it. */
  broker: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  /**
   * How the scale-out held each instance's load: runs before 2026-11-27 gave each gateway
   * `scaleOutConnections`, later ones `scaleOutRate` creates a second; the earliest, neither.
   */
  settings: { connections: number; scaleOutConnections?: number; scaleOutRate?: number; durationSeconds: number; warmupSeconds: number };
  /** What the scenarios ran on; absent from runs recorded before the volume was generated. */
  volume?: Volume;
  /** The earlier run this run's trip creates were compared with, and its trip create ratio to hello-world. */
  tripCreateBefore?: { startedAt: string; ratio: number };
  scenarios: ScenarioResult[];
  /** Requests per second of each hello-world run, in order: one before the first scenario and one after each. */
  helloWorldRuns: number[];
  peakRssMiB: Record<string, number | null>;
  targets: Target[];
  /** Positions a second per core of each part, and what fleets of 1k-100k positions a second would need; absent from older runs. */
  capacity?: CapacityModel;
}

interface Running {
  url: string;
  process: ChildProcess;
}

interface LoadRequest {
  method: 'GET' | 'POST';
  /** A function when each request asks for something else (another device, another day). */
  path: string | (() => string);
  /** A function when each request comes from another client (another device's token). */
  headers?: Record<string, string> | (() => Record<string, string>);
  body?: () => string;
  /** Positions each request carries, where positions per second are reported (a batch, the scale-out's creates). */
  positions?: number;
  /** For a batch: how many of its positions the answer refused, each counted as an error. */
  refused?: (body: string) => number;
  /** Sees each 200's body as it arrives. */
  answered?: (body: string) => void;
  /** Runs between the warm-up and the measured run. */
  warmedUp?: () => Promise<void>;
}

function spawnNode(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** Starts one of the baseline servers and waits for the port it reports. */
async function startBaseline(script: string, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = spawnNode(path.join(baselinesDir, script), { PORT: '0', ...env });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /"port":(\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

/** A TCP port free on this machine now. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitReady(url: string, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the stack exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`the stack did not become ready within ${timeoutMs / 1000} s`);
}

/** The services the launcher started, by name, for reading their CPU and peak memory. */
function serviceProcesses(launcherPid: number): Record<string, number> {
  const found: Record<string, number> = {};
  const children = readFileSync(`/proc/${launcherPid}/task/${launcherPid}/children`, 'utf8').trim().split(/\s+/);
  for (const pid of children.filter(Boolean)) {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const match = /services\/([a-z-]+)\/dist\/main\.js/.exec(cmdline);
    if (match) found[match[1]!] = Number(pid);
    else if (cmdline.includes('services/teltonika/dist/main.js')) found.teltonika = Number(pid);
  }
  return found;
}

/** Peak resident memory of a process (VmHWM), in MiB. */
function peakRssMiB(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * Several URLs (the scale-out's gateways) share the connections in turn, connection i going to URL
 * i mod n, in one autocannon run: its figures and its latency histogram are then of all the requests,
 * with no summing of runs nor merging of percentiles. autocannon takes a list (its README: "More than one
 * URL is allowed"); its type declarations know only one.
 */
async function load(url: string | string[], request: LoadRequest, connections: number, seconds: number) {
  let refused = 0;
  const { path: requestPath, body: makeBody, headers } = request;
  const perRequest = makeBody || typeof requestPath !== 'string' || typeof headers === 'function';
  const result = await autocannon({
    url: url as string,
    connections,
    duration: seconds,
    requests: [
      {
        method: request.method,
        path: typeof requestPath === 'string' ? requestPath : requestPath(),
        headers: typeof headers === 'function' ? headers() : headers,
        ...(perRequest
          ? {
              setupRequest: (req: object) => ({
                ...req,
                ...(typeof requestPath === 'string' ? {} : { path: requestPath() }),
                ...(typeof headers === 'function' ? { headers: headers() } : {}),
                ...(makeBody ? { body: makeBody() } : {}),
              }),
            }
          : {}),
        ...(request.refused || request.answered
          ? {
              onResponse: (status: number, body: string) => {
                if (status !== 200) return;
                if (request.refused) refused += request.refused(body);
                request.answered?.(body);
              },
            }
          : {}),
      },
    ],
  });
  return { result, refused };
}

/** How a scenario is driven: at a fixed concurrency (autocannon), or at a fixed rate for each URL (paced). */
type Drive = { connections: number } | { ratePerUrl: number };

/** Runs the load `drive` describes for `seconds`. */
async function drive(url: string | string[], request: LoadRequest, how: Drive, seconds: number) {
  if ('connections' in how) return load(url, request, how.connections, seconds);
  let refused = 0;
  const { path: requestPath, headers, body } = request;
  const result = await pacedLoad(
    [url].flat(),
    {
      method: request.method,
      path: typeof requestPath === 'string' ? () => requestPath : requestPath,
      headers: typeof headers === 'function' ? headers : () => headers ?? {},
      ...(body ? { body } : {}),
      answered: (answer) => {
        refused += request.refused?.(answer) ?? 0;
        request.answered?.(answer);
      },
    },
    { ratePerUrl: how.ratePerUrl, seconds },
  );
  return { result, refused };
}

type Measured = Omit<
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
function cpuSummary(cpu: CpuPerRequest, server: string): string {
  const label = (part: CpuPart) => (part === 'gateway' ? server : part === 'loadGenerator' ? 'load' : part);
  const parts = CPU_PARTS.filter((part) => cpu[part] !== null).map((part) => `${label(part)} ${Math.round(cpu[part]!)}`);
  return `CPU ${Math.round(cpu.total)} µs/req (${parts.join(', ')})`;
}

/** One process's CPU seconds as µs per request answered, as `perUnit` gives each part's. */
const microsPerRequest = (seconds: number | null, answered: number) =>
  seconds === null || answered <= 0 ? null : (seconds * 1e6) / answered;

/** The processes whose CPU a scenario counts, and what its `gateway` part is (a baseline server stands in for it). */
interface CpuOf {
  sources: CpuSources;
  server: 'gateway' | 'server';
  /** Processes whose CPU is also reported one by one, by label: those of a part run by several. */
  processes?: Record<string, number>;
}

/** Reads each of several counters at once, by label. */
async function readCounters(counters: Record<string, () => Promise<number>>): Promise<Record<string, number>> {
  return Object.fromEntries(await Promise.all(Object.entries(counters).map(async ([label, read]) => [label, await read()])));
}

/** How long the gateways may take to answer what a warm-up left in flight. */
const SETTLE_TIMEOUT_MS = 15_000;

/**
 * Waits until no command waits for its reply at any of the gateways. autocannon ends a run without
 * waiting for the requests it has in flight, whose commands the gateway still holds: the measured run
 * would start on top of them, and 64 batches of 100 positions left by the warm-up plus the first 64 of
 * the run were over the gateway's MAX_IN_FLIGHT of 10,000.
 */
async function repliesSettled(url: string | string[]): Promise<void> {
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
async function measure(
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
function cpuPerRequest(
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

export const TELTONIKA_SCENARIO = `Teltonika Codec 8, packets of 10 records`;
const TELTONIKA_RECORDS_PER_PACKET = 10;
let benchDevices = 0;

/** Registers one device per connection through the gateway, as an operator would, and answers their IMEIs. */
async function registerBenchDevices(gatewayUrl: string, bearer: () => Record<string, string>, count: number): Promise<string[]> {
  benchDevices += 1;
  const prefix = `${String(Date.now()).slice(-7)}${benchDevices % 100}`.padStart(9, '0');
  const imeis = Array.from({ length: count }, (_, index) => `86${prefix}${String(index).padStart(4, '0')}`);
  for (const imei of imeis) {
    const response = await fetch(`${gatewayUrl}/fleet/api/v1/devices`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ imei, name: 'bench' }),
    });
    if (response.status !== 200) throw new Error(`registering bench device ${imei} answered ${response.status}`);
  }
  return imeis;
}

/**
 * The Teltonika scenario: a request is a packet, answered by its acknowledgement. The warm-up and the
 * measured run each have devices of their own, so that neither's records count against the other's
 * device rate limit.
 */
async function measureTeltonika(port: number, register: () => Promise<string[]>, options: BenchOptions, cpuOf: CpuOf): Promise<Measured> {
  if (options.warmupSeconds > 0) await teltonikaLoad(port, await register(), options.warmupSeconds, TELTONIKA_RECORDS_PER_PACKET);
  const imeis = await register();
  const before = cpuSnapshot(cpuOf.sources);
  const result = await teltonikaLoad(port, imeis, options.durationSeconds, TELTONIKA_RECORDS_PER_PACKET);
  const after = cpuSnapshot(cpuOf.sources);
  const cpu = cpuBetween(before, after);
  const packetsPerSecond = result.packets / options.durationSeconds;
  const p99Ms = quantileMs(result.latencies, 0.99);
  process.stderr.write(
    `  ${TELTONIKA_SCENARIO}: ${Math.round(packetsPerSecond)} packets/s, ${Math.round(packetsPerSecond * TELTONIKA_RECORDS_PER_PACKET)} ` +
      `positions/s, p99 ${p99Ms} ms, ${result.errors} errors, ${cpuSummary(perUnit(cpu, result.packets), 'teltonika')}\n`,
  );
  return {
    name: TELTONIKA_SCENARIO,
    requestsPerSecond: packetsPerSecond,
    p50Ms: quantileMs(result.latencies, 0.5),
    p99Ms,
    errors: result.errors,
    positionsPerSecond: packetsPerSecond * TELTONIKA_RECORDS_PER_PACKET,
    cpu,
    answered: result.packets,
  };
}

let sequence = 0;
/**
 * Positions are of the present, as live devices report them: their days' partitions exist (the writer
 * creates today's and the week ahead's), the naive baseline inserts into them too, and none is beyond
 * the gateway's MAX_FUTURE_SKEW. Each request has an IMEI of its own, so equal times never collide.
 */
const benchStart = Date.now();
/** A position no other request of the run has: a fresh IMEI per request. */
function uniqueTrip() {
  sequence += 1;
  return {
    imei: `b${process.pid}${sequence}`,
    gpsTime: new Date(benchStart + sequence).toISOString(),
    latitude: -6.2 + (sequence % 100) / 1000,
    longitude: 106.8,
    speed: sequence % 120,
    ignition: sequence % 2 === 0,
    satellite: 9,
  };
}

/** A device back in coverage uploading what it buffered: one IMEI, positions a second apart. */
function bufferedTrack(count: number) {
  sequence += 1;
  const imei = `bb${process.pid}${sequence}`;
  return Array.from({ length: count }, (_, i) => ({
    imei,
    gpsTime: new Date(benchStart + i * 1000).toISOString(),
    latitude: -6.2 + i / 1000,
    longitude: 106.8,
    speed: i % 120,
    ignition: true,
    satellite: 9,
  }));
}

/** One position of each of `count` devices, as a tracker aggregator or a protocol gateway forwards them. */
function aggregatedBatch(count: number) {
  sequence += 1;
  return Array.from({ length: count }, (_, i) => ({
    imei: `ba${process.pid}${sequence}d${i}`,
    // Each device is new, so one instant serves them all; the counter would soon pass MAX_FUTURE_SKEW.
    gpsTime: new Date(benchStart).toISOString(),
    latitude: -6.2 + i / 1000,
    longitude: 106.8,
    speed: i % 120,
    ignition: true,
    satellite: 9,
  }));
}

const BATCH_POSITIONS = 100;
/** Distinct token subjects the load is spread over, as devices and apps each hold their own. */
const BENCH_DEVICE_TOKENS = 64;

const DEVICES_PATH = '/fleet/api/v1/devices';
const HISTORY_PAGE_LIMIT = 100;

const anyDevice = (volume: Volume) => volumeImei(1 + Math.floor(Math.random() * volume.devices));

/** One device's positions over one day, that day anywhere inside the generated window. */
function historyPagePath(volume: Volume): string {
  const from = Date.parse(volume.from) + Math.floor(Math.random() * (Date.parse(volume.to) - Date.parse(volume.from) - DAY_MS));
  const query = new URLSearchParams({
    from: new Date(from).toISOString(),
    to: new Date(from + DAY_MS).toISOString(),
    limit: String(HISTORY_PAGE_LIMIT),
  });
  return `${DEVICES_PATH}/${anyDevice(volume)}/trip-locations?${query.toString()}`;
}

function formOf(trip: Record<string, unknown>): string {
  return new URLSearchParams(Object.entries(trip).map(([key, value]): [string, string] => [key, String(value)])).toString();
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const apiKey = options.apiKey ?? `bench-${randomBytes(12).toString('hex')}`;
  const jwtSecret = options.jwtSecret ?? randomBytes(32).toString('base64url');
  const startedAt = new Date().toISOString();
  const stopList: ChildProcess[] = [];
  /** The scale-out's added gateways and trip-writers while they run. */
  const scaleOut: ScaleOut[] = [];
  /** The replicated scenario's three Kafka nodes and the gateway and trip-writer on them, while they run. */
  let replicated: Replicated | undefined;
  const stopAll = async () => {
    await Promise.all(
      stopList.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  };

  // A run starts from an empty database: one left by a run that was cut short would hold its volume
  // too, and every figure that reads it would be of twice the data.
  if (!options.targetUrl) await dropBenchDatabase(options.databaseUrl);
  await ensureDatabase(options.databaseUrl);
  let gatewayUrl = options.targetUrl;
  let broker = options.targetUrl ? 'that of the stack at the target URL' : 'not reported by the launcher';
  let launcher: ChildProcess | undefined;
  /** The started stack's Teltonika listener; none against a stack at a target URL. */
  let teltonikaPort: number | undefined;
  /** The broker's JVM, as the launcher names it when it started or found the local Apache Kafka. */
  let brokerPid: number | null = null;
  try {
    if (!gatewayUrl) {
      const port = await freePort();
      teltonikaPort = await freePort();
      launcher = spawn(process.execPath, [path.join(repoRoot, 'deploy/local/dist/start-stack.js')], {
        env: {
          ...process.env,
          PORT: String(port),
          TRIP_WRITER_METRICS_PORT: '0',
          GROUP_WRITER_METRICS_PORT: '0',
          TELTONIKA_PORT: String(teltonikaPort),
          TELTONIKA_METRICS_PORT: '0',
          DATABASE_URL: options.databaseUrl,
          KAFKA_TOPIC_PREFIX: `bench-${Date.now()}`,
          CACHE_KEY_PREFIX: `bench-${Date.now()}:`,
          LOG_LEVEL: 'warn',
          API_KEYS: apiKey,
          JWT_SECRET: jwtSecret,
          NODE_ENV: 'production',
          ...(options.kafkaBrokers ? { KAFKA_BROKERS: options.kafkaBrokers } : {}),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      stopList.push(launcher);
      // The launcher's log says which broker it runs; its lines are passed on as they come.
      createInterface({ input: launcher.stdout! }).on('line', (line) => {
        process.stdout.write(`${line}\n`);
        const entry = (() => {
          try {
            return JSON.parse(line) as { msg?: unknown; pid?: unknown };
          } catch {
            return {};
          }
        })();
        const msg = String(entry.msg ?? '');
        if (msg.startsWith('broker: ')) {
          broker = msg.slice('broker: '.length);
          if (typeof entry.pid === 'number') brokerPid = entry.pid;
        }
      });
      gatewayUrl = `http://127.0.0.1:${port}`;
      await waitReady(gatewayUrl, launcher);
    }

    process.stderr.write(`bench: generating ${options.volume.positions} positions of ${options.volume.devices} devices\n`);
    const volume = await generateVolume(options.databaseUrl, options.volume, (message) => process.stderr.write(`  volume: ${message}\n`));
    process.stderr.write(
      `bench: ${volume.positions} positions generated in ${volume.generationSeconds.toFixed(1)} s ` +
        `(trip_locations ${volume.tripLocationsPartitioned ? 'partitioned by day' : 'one table'})\n`,
    );

    const hello = await startBaseline('hello-world.js');
    stopList.push(hello.process);
    const naive = await startBaseline('naive-insert.js', { DATABASE_URL: options.databaseUrl });
    stopList.push(naive.process);

    const pool = new Pool({ connectionString: options.databaseUrl, max: 1 });
    // The naive design manages no partitions: the days its posts fall on (the run's own) are created
    // ahead, as an operator of such a design would.
    if (await isTripLocationsPartitioned(pool)) await ensureDailyPartitions(pool, benchStart, benchStart + 2 * DAY_MS);
    const categoryId = randomUUID();
    await pool.query('INSERT INTO product_categories (id, name, min_temperature, max_temperature) VALUES ($1, $2, $3, $4)', [
      categoryId,
      'Frozen food (bench)',
      -25,
      -18,
    ]);
    await pool.end();

    // The load is many devices, each with a token of its own, as in a fleet: one shared subject would
    // meet the per-subject rate limit, which is there for a single client gone wrong.
    const tokens = await Promise.all(
      Array.from({ length: BENCH_DEVICE_TOKENS }, (_, device) =>
        new SignJWT({})
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(`bench-device-${device}`)
          .setExpirationTime('2h')
          .sign(new TextEncoder().encode(jwtSecret)),
      ),
    );
    const bearer = () => ({ authorization: `Bearer ${tokens[Math.floor(Math.random() * tokens.length)]!}` });
    /** A batch post of BATCH_POSITIONS positions made by `positions`; each it refuses counts as an error. */
    const batchOf = (positions: () => unknown[]): LoadRequest => ({
      method: 'POST',
      path: '/fleet/api/v1/trip-location/batch',
      headers: () => ({ ...bearer(), ...json }),
      body: () => JSON.stringify(positions()),
      positions: BATCH_POSITIONS,
      refused: (body) => (JSON.parse(body) as { data: { rejected: number } }).data.rejected,
    });
    const json = { 'content-type': 'application/json' };
    const tripCreateJson: LoadRequest = {
      method: 'POST',
      path: '/fleet/api/v1/trip-location',
      headers: () => ({ ...bearer(), ...json }),
      body: () => JSON.stringify(uniqueTrip()),
    };

    if (options.warmupSeconds > 0) {
      // The broker is a JVM: its first tens of thousands of requests run interpreted while its compiler
      // catches up, and a 3 s warm-up left that to whichever Kafka scenario came first (its broker CPU
      // per create was 2 to 3 times that of the same creates later in the run). The write path is
      // warmed up once, unmeasured, before any scenario.
      process.stderr.write(`bench: warming up the write path (gateway, broker, trip-writer) for ${WRITE_PATH_WARMUP_SECONDS} s\n`);
      await load(gatewayUrl, tripCreateJson, options.connections, WRITE_PATH_WARMUP_SECONDS);
      await repliesSettled(gatewayUrl);
    }
    process.stderr.write(
      `bench: ${options.connections} connections, ${options.durationSeconds} s each after ${options.warmupSeconds} s warm-up\n`,
    );
    const scenarioLoads: Array<{ name: string; url: string; request: LoadRequest }> = [
      {
        name: 'naive INSERT per request',
        url: naive.url,
        request: { method: 'POST', path: '/trip-location', headers: json, body: () => JSON.stringify(uniqueTrip()) },
      },
      {
        name: 'category read, warm cache',
        url: gatewayUrl,
        request: { method: 'GET', path: `/order/api/web/v1/product-category/${categoryId}`, headers: { authorization: apiKey } },
      },
      { name: 'trip create, JSON', url: gatewayUrl, request: tripCreateJson },
      {
        name: 'trip create, form',
        url: gatewayUrl,
        request: {
          method: 'POST',
          path: '/fleet/api/v1/trip-location',
          headers: () => ({ ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }),
          body: () => formOf(uniqueTrip()),
        },
      },
      { name: `trip batch, ${BATCH_POSITIONS} positions`, url: gatewayUrl, request: batchOf(() => bufferedTrack(BATCH_POSITIONS)) },
      { name: MANY_DEVICES_BATCH, url: gatewayUrl, request: batchOf(() => aggregatedBatch(BATCH_POSITIONS)) },
      {
        name: 'vehicle group create, 10 ids',
        url: gatewayUrl,
        request: {
          method: 'POST',
          path: '/fleet/api/v1/vehicle-group',
          headers: () => ({ ...bearer(), ...json }),
          body: () => JSON.stringify({ vehicleGroupName: `Bench ${sequence++}`, vehicleIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }),
        },
      },
      {
        name: 'last-location read',
        url: gatewayUrl,
        request: { method: 'GET', path: () => `${DEVICES_PATH}/${anyDevice(volume)}/last-location`, headers: bearer },
      },
      {
        name: 'history page, one device one day',
        url: gatewayUrl,
        request: { method: 'GET', path: () => historyPagePath(volume), headers: bearer },
      },
    ];

    // Found once the stack has long been up; a stack already running elsewhere has no pids here.
    const services = launcher?.pid ? serviceProcesses(launcher.pid) : {};
    if (brokerPid === null && launcher && options.kafkaBrokers) brokerPid = localBrokerPid(options.kafkaBrokers);
    const local = ['localhost', '127.0.0.1', '[::1]'].includes(new URL(options.databaseUrl).hostname);
    const pidsOf =
      (...pids: Array<number | null | undefined>) =>
      () =>
        pids.filter((pid): pid is number => Boolean(pid));
    // With the scale-out running, a part is all its processes, and each is also reported on its own.
    const cpuOf = (server?: ChildProcess, twins: ScaleOut[] = []): CpuOf => {
      const gateways = [services.gateway, ...twins.flatMap((twin) => twin.gatewayPids)];
      const tripWriters = [services['trip-writer'], ...twins.flatMap((twin) => twin.tripWriterPids)];
      return {
        sources: {
          gateway: server ? pidsOf(server.pid) : pidsOf(...gateways),
          'trip-writer': pidsOf(...tripWriters),
          'group-writer': pidsOf(services['group-writer']),
          broker: pidsOf(brokerPid),
          postgres: local ? postgresPids : () => [],
        },
        server: server ? 'server' : 'gateway',
        ...(twins.length > 0 && services.gateway && services['trip-writer']
          ? {
              processes: Object.fromEntries([
                ...gateways.map((pid, i) => [`gateway ${i + 1}`, pid!]),
                ...tripWriters.map((pid, i) => [`trip-writer ${i + 1}`, pid!]),
              ]),
            }
          : {}),
      };
    };

    // The hello-world server stays warm between its runs; only its first run needs the warm-up.
    const measureHello = (first: boolean) =>
      measure(
        'hello-world (baseline)',
        hello.url,
        { method: 'GET', path: '/' },
        { ...options, warmupSeconds: first ? options.warmupSeconds : 0 },
        { connections: options.connections },
        cpuOf(hello.process),
      );
    const helloRuns: Measured[] = [await measureHello(true)];
    const measured: ScenarioResult[] = [];
    /**
     * Records a measured scenario with the hello-world run after it, the one before being the last
     * already run; `positions` is what each of its requests carries.
     */
    const record = async (result: Measured, positions?: number) => {
      const before = helloRuns.at(-1)!;
      const after = await measureHello(false);
      helloRuns.push(after);
      const baseline = {
        requestsPerSecond: (before.requestsPerSecond + after.requestsPerSecond) / 2,
        p99Ms: (before.p99Ms + after.p99Ms) / 2,
      };
      const { cpu, answered, cpuByProcess, ...figures } = result;
      measured.push({
        ...figures,
        baseline,
        ratio: ratioTo(result.requestsPerSecond, baseline.requestsPerSecond),
        ...cpuPerRequest({ cpu, answered, cpuByProcess }, positions),
      });
    };
    /** Measures a scenario and records it; driven at the run's connections unless `how` says otherwise. */
    const runScenario = async (
      name: string,
      url: string | string[],
      request: LoadRequest,
      sources: CpuOf,
      gateways?: Record<string, () => Promise<number>>,
      how: Drive = { connections: options.connections },
    ) => record(await measure(name, url, request, options, how, sources, gateways), request.positions);
    for (const { name, url, request } of scenarioLoads) {
      await runScenario(name, url, request, cpuOf(url === naive.url ? naive.process : undefined));
    }

    // Fleet apps following devices live while the devices post: the trip creates of the scenario above,
    // each for one of the devices that 100 streams follow, ten each. The gateway's CPU beyond the plain
    // creates' is what delivering the events costs it.
    {
      const followed = followedDevices(`bl${process.pid}`);
      const devices = followed.flat();
      const live = await LiveStreams.open(gatewayUrl, followed, bearer);
      try {
        const followedCreate: LoadRequest = {
          ...tripCreateJson,
          body: () => JSON.stringify({ ...uniqueTrip(), imei: devices[sequence % devices.length] }),
          answered: (body) => live.answered(body),
          warmedUp: async () => {
            await live.settled(STREAM_SETTLE_MS);
            live.reset();
          },
        };
        await runScenario(LIVE_STREAMS_SCENARIO, gatewayUrl, followedCreate, cpuOf());
        await live.settled(STREAM_SETTLE_MS);
        const { missing, ...streamDelay } = live.delays();
        const result = measured.at(-1)!;
        result.streamDelay = streamDelay;
        result.errors += missing;
        process.stderr.write(
          `  ${LIVE_STREAMS_SCENARIO}: ${streamDelay.events} events, from the 200 to the event p50 ${streamDelay.p50Ms} ms, ` +
            `p99 ${streamDelay.p99Ms} ms, ${missing} missing\n`,
        );
      } finally {
        await live.close();
      }
    }

    // Teltonika devices over TCP: one connection per device, packets of 10 records. The listener stands
    // in the gateway's column, as the process that takes the positions in.
    if (teltonikaPort !== undefined && services.teltonika) {
      const listenerCpu: CpuOf = { ...cpuOf(), sources: { ...cpuOf().sources, gateway: pidsOf(services.teltonika) } };
      const register = () => registerBenchDevices(gatewayUrl!, bearer, options.connections);
      await record(await measureTeltonika(teltonikaPort, register, options, listenerCpu), TELTONIKA_RECORDS_PER_PACKET);
    }

    // Scale-out: the same trip creates through one gateway and one trip-writer, then through two of each
    // in one consumer group, then four, the connections split evenly over the gateways. 1 + 1 is
    // measured afresh just before 2 + 2 rather than taken from the trip create scenario above, so that
    // the host has least time to drift between them. Only a stack started here has processes to copy.
    if (services.gateway && services['trip-writer']) {
      const creates: LoadRequest = { ...tripCreateJson, positions: 1 };
      const createThrough = async (url: string) => {
        const response = await fetch(`${url}/fleet/api/v1/trip-location`, {
          method: 'POST',
          headers: { ...bearer(), ...json },
          body: JSON.stringify(uniqueTrip()),
        });
        await response.arrayBuffer();
        return response.status;
      };
      const paced: Drive = { ratePerUrl: options.scaleOutRate };
      await runScenario(SCALE_OUT_ONE, [gatewayUrl], creates, cpuOf(), undefined, paced);
      const gatewayUrls = [gatewayUrl];
      for (const [name, added] of [
        [SCALE_OUT_TWO, 1],
        [SCALE_OUT_FOUR, 2],
      ] as const) {
        process.stderr.write(`bench: starting ${added} more gateway(s) and trip-writer(s)\n`);
        const ports: number[] = [];
        while (ports.length < 2 * added) {
          const port = await freePort();
          if (!ports.includes(port)) ports.push(port);
        }
        const twins = await startScaleOut({
          gatewayPid: services.gateway,
          tripWriterPid: services['trip-writer'],
          gatewayUrls,
          ports,
          create: createThrough,
        });
        scaleOut.push(twins);
        gatewayUrls.push(...twins.gatewayUrls);
        const answeredBy = Object.fromEntries(gatewayUrls.map((url, i) => [`gateway ${i + 1}`, () => postsAnswered(url)]));
        await runScenario(name, [...gatewayUrls], creates, cpuOf(undefined, scaleOut), answeredBy, paced);
      }
      for (const twins of scaleOut.splice(0)) await twins.stop();

      // Replication: 1 + 1 again, on three Kafka nodes instead of the single broker, right after the
      // single broker's 1 + 1 above. The launcher's own gateway and trip-writer stay idle meanwhile, on
      // the single broker; the part figures are the twins', the three nodes' and PostgreSQL's.
      process.stderr.write('bench: starting three Kafka nodes, a gateway and a trip-writer on them\n');
      const gatewayPort = await freePort();
      let metricsPort = await freePort();
      while (metricsPort === gatewayPort) metricsPort = await freePort();
      const ports: [number, number] = [gatewayPort, metricsPort];
      replicated = await startReplicated({
        gatewayPid: services.gateway,
        tripWriterPid: services['trip-writer'],
        ports,
        create: createThrough,
      });
      const onCluster = replicated;
      const clusterCpu: CpuOf = {
        sources: {
          gateway: pidsOf(...onCluster.twins.gatewayPids),
          'trip-writer': pidsOf(...onCluster.twins.tripWriterPids),
          'group-writer': () => [],
          broker: () => onCluster.brokerPids(),
          postgres: local ? postgresPids : () => [],
        },
        server: 'gateway',
      };
      // Three fresh JVMs, warmed as the single broker was before the first write scenario.
      if (options.warmupSeconds > 0) {
        process.stderr.write(`bench: warming up the three Kafka nodes for ${WRITE_PATH_WARMUP_SECONDS} s\n`);
        await load(onCluster.twins.gatewayUrls[0]!, tripCreateJson, options.connections, WRITE_PATH_WARMUP_SECONDS);
        await repliesSettled(onCluster.twins.gatewayUrls[0]!);
      }
      await runScenario(REPLICATED_SCENARIO, onCluster.twins.gatewayUrls[0]!, creates, clusterCpu);
      await onCluster.stop();
      replicated = undefined;
    }
    const mean = (pick: (run: Measured) => number) => helloRuns.reduce((sum, run) => sum + pick(run), 0) / helloRuns.length;
    const helloMean = { requestsPerSecond: mean((run) => run.requestsPerSecond), p99Ms: Math.round(mean((run) => run.p99Ms)) };
    const scenarios: ScenarioResult[] = [
      {
        name: 'hello-world (baseline)',
        requestsPerSecond: helloMean.requestsPerSecond,
        p50Ms: Math.round(mean((run) => run.p50Ms)),
        p99Ms: helloMean.p99Ms,
        errors: helloRuns.reduce((sum, run) => sum + run.errors, 0),
        baseline: helloMean,
        ratio: 1,
        cpuMicrosPerRequest: perUnit(
          helloRuns.map((run) => run.cpu).reduce(addCpu),
          helloRuns.reduce((sum, run) => sum + run.answered, 0),
        ),
      },
      ...measured,
    ];
    const peakRss: Record<string, number | null> = { gateway: null, 'trip-writer': null, 'group-writer': null };
    for (const [name, pid] of Object.entries(services)) peakRss[name] = peakRssMiB(pid);

    const tripCreateBefore = (() => {
      const run = lastRunBeforePartitioning(options.history ?? [], options.connections);
      const ratio = run?.scenarios.find((scenario) => scenario.name === 'trip create, JSON')?.ratio;
      return run && ratio ? { startedAt: run.startedAt, ratio } : undefined;
    })();
    const targets = benchTargets({ scenarios, gatewayRssMiB: peakRss.gateway ?? null, tripCreateBefore });

    return {
      startedAt,
      broker,
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        platform: `${os.type()} ${os.release()}`,
      },
      settings: {
        connections: options.connections,
        scaleOutRate: options.scaleOutRate,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
      },
      volume,
      ...(tripCreateBefore ? { tripCreateBefore } : {}),
      scenarios,
      helloWorldRuns: helloRuns.map((run) => run.requestsPerSecond),
      peakRssMiB: peakRss,
      targets,
      capacity: capacityModel(scenarios, volume.bytesPerPosition, BATCH_POSITIONS),
    };
  } finally {
    // The added gateways and trip-writers first: the trip-writers leave their group while the broker runs.
    for (const twins of scaleOut) await twins.stop();
    await replicated?.stop();
    await stopAll();
  }
}

export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  if (new URL(databaseUrl).pathname.includes('bench')) await dropDatabase(databaseUrl);
}

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
import { dropDatabase, ensureDatabase } from '@fleet/shared';
import { lastRunBeforePartitioning } from './history';
import {
  addCpu,
  CPU_PARTS,
  cpuBetween,
  cpuSnapshot,
  localBrokerPid,
  perUnit,
  postgresPids,
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

export const repoRoot = path.resolve(__dirname, '..', '..');
/** The baselines run compiled, as the services do, whether this module runs compiled or under jest. */
const baselinesDir = path.join(repoRoot, 'bench', 'dist');

export interface BenchOptions {
  connections: number;
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
  /** For a scenario posting many positions per request: positions stored per second. */
  positionsPerSecond?: number;
  /** The mean of the hello-world runs just before and just after this scenario (for hello-world: of all its runs). */
  baseline: { requestsPerSecond: number; p99Ms: number };
  ratio: number;
  /** CPU of each process over the measured window, per request answered in it (hello-world: over all its runs). */
  cpuMicrosPerRequest: CpuPerRequest;
  /** For a scenario posting many positions per request: the same per position. */
  cpuMicrosPerPosition?: CpuPerRequest;
}

export interface Target {
  what: string;
  value: number;
  target: string;
  met: boolean;
}

export interface BenchReport {
  startedAt: string;
  /** The Kafka the stack ran on, as its launcher named it. */
  broker: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  settings: { connections: number; durationSeconds: number; warmupSeconds: number };
  /** What the scenarios ran on; absent from runs recorded before the volume was generated. */
  volume?: Volume;
  /** The earlier run this run's trip creates were compared with, and its trip create ratio to hello-world. */
  tripCreateBefore?: { startedAt: string; ratio: number };
  scenarios: ScenarioResult[];
  /** Requests per second of each hello-world run, in order: one before the first scenario and one after each. */
  helloWorldRuns: number[];
  peakRssMiB: Record<string, number | null>;
  targets: Target[];
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
  /** Positions each request carries, for a batch. */
  positions?: number;
  /** For a batch: how many of its positions the answer refused, each counted as an error. */
  refused?: (body: string) => number;
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

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the stack exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error('the stack did not become ready within 90 s');
}

/** The services the launcher started, by name, for reading their CPU and peak memory. */
function serviceProcesses(launcherPid: number): Record<string, number> {
  const found: Record<string, number> = {};
  const children = readFileSync(`/proc/${launcherPid}/task/${launcherPid}/children`, 'utf8').trim().split(/\s+/);
  for (const pid of children.filter(Boolean)) {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const match = /services\/([a-z-]+)\/dist\/main\.js/.exec(cmdline);
    if (match) found[match[1]!] = Number(pid);
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

async function load(url: string, request: LoadRequest, connections: number, seconds: number) {
  let refused = 0;
  const { path: requestPath, body: makeBody, headers } = request;
  const perRequest = makeBody || typeof requestPath !== 'string' || typeof headers === 'function';
  const result = await autocannon({
    url,
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
        ...(request.refused
          ? {
              onResponse: (status: number, body: string) => {
                if (status === 200) refused += request.refused!(body);
              },
            }
          : {}),
      },
    ],
  });
  return { result, refused };
}

type Measured = Omit<ScenarioResult, 'baseline' | 'ratio' | 'cpuMicrosPerRequest' | 'cpuMicrosPerPosition'> & {
  cpu: CpuSeconds;
  /** Requests answered in the measured window. */
  answered: number;
};

/** The console's short form of a scenario's CPU; `server` names what the `gateway` part is. */
function cpuSummary(cpu: CpuPerRequest, server: string): string {
  const label = (part: CpuPart) => (part === 'gateway' ? server : part === 'loadGenerator' ? 'load' : part);
  const parts = CPU_PARTS.filter((part) => cpu[part] !== null).map((part) => `${label(part)} ${Math.round(cpu[part]!)}`);
  return `CPU ${Math.round(cpu.total)} µs/req (${parts.join(', ')})`;
}

const ratioTo = (value: number, baseline: number) => (baseline > 0 ? value / baseline : 0);

/** The processes whose CPU a scenario counts, and what its `gateway` part is (a baseline server stands in for it). */
interface CpuOf {
  sources: CpuSources;
  server: 'gateway' | 'server';
}

/** Measures after the warm-up, with the CPU of the processes `sources` names read around the measured window. */
async function measure(name: string, url: string, request: LoadRequest, options: BenchOptions, cpuOf: CpuOf): Promise<Measured> {
  if (options.warmupSeconds > 0) await load(url, request, options.connections, options.warmupSeconds);
  const before = cpuSnapshot(cpuOf.sources);
  const { result, refused } = await load(url, request, options.connections, options.durationSeconds);
  const cpu = cpuBetween(before, cpuSnapshot(cpuOf.sources));
  const errors = result.errors + result.timeouts + result.non2xx + refused;
  process.stderr.write(
    `  ${name}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ${errors} errors, ` +
      `${cpuSummary(perUnit(cpu, result.requests.total), cpuOf.server)}\n`,
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
  };
}

/** A scenario's CPU per request, and per position for a batch. */
function cpuPerRequest(
  cpu: CpuSeconds,
  answered: number,
  positions?: number,
): Pick<ScenarioResult, 'cpuMicrosPerRequest' | 'cpuMicrosPerPosition'> {
  return {
    cpuMicrosPerRequest: perUnit(cpu, answered),
    ...(positions ? { cpuMicrosPerPosition: perUnit(cpu, answered * positions) } : {}),
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

  await ensureDatabase(options.databaseUrl);
  let gatewayUrl = options.targetUrl;
  let broker = options.targetUrl ? 'that of the stack at the target URL' : 'not reported by the launcher';
  let launcher: ChildProcess | undefined;
  /** The broker's JVM, as the launcher names it when it started or found the local Apache Kafka. */
  let brokerPid: number | null = null;
  try {
    if (!gatewayUrl) {
      const port = await freePort();
      launcher = spawn(process.execPath, [path.join(repoRoot, 'deploy/local/dist/start-stack.js')], {
        env: {
          ...process.env,
          PORT: String(port),
          TRIP_WRITER_METRICS_PORT: '0',
          GROUP_WRITER_METRICS_PORT: '0',
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
    const json = { 'content-type': 'application/json' };

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
      {
        name: 'trip create, JSON',
        url: gatewayUrl,
        request: {
          method: 'POST',
          path: '/fleet/api/v1/trip-location',
          headers: () => ({ ...bearer(), ...json }),
          body: () => JSON.stringify(uniqueTrip()),
        },
      },
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
      {
        name: `trip batch, ${BATCH_POSITIONS} positions`,
        url: gatewayUrl,
        request: {
          method: 'POST',
          path: '/fleet/api/v1/trip-location/batch',
          headers: () => ({ ...bearer(), ...json }),
          body: () => JSON.stringify(bufferedTrack(BATCH_POSITIONS)),
          positions: BATCH_POSITIONS,
          refused: (body) => (JSON.parse(body) as { data: { rejected: number } }).data.rejected,
        },
      },
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
    const pidOf = (pid: number | null | undefined) => () => (pid ? [pid] : []);
    const cpuOf = (server: ChildProcess | undefined): CpuOf => ({
      sources: {
        gateway: pidOf(server ? server.pid : services.gateway),
        'trip-writer': pidOf(services['trip-writer']),
        'group-writer': pidOf(services['group-writer']),
        broker: pidOf(brokerPid),
        postgres: local ? postgresPids : () => [],
      },
      server: server ? 'server' : 'gateway',
    });

    // The hello-world server stays warm between its runs; only its first run needs the warm-up.
    const measureHello = (first: boolean) =>
      measure(
        'hello-world (baseline)',
        hello.url,
        { method: 'GET', path: '/' },
        { ...options, warmupSeconds: first ? options.warmupSeconds : 0 },
        cpuOf(hello.process),
      );
    const helloRuns: Measured[] = [await measureHello(true)];
    const measured: ScenarioResult[] = [];
    for (const { name, url, request } of scenarioLoads) {
      const result = await measure(name, url, request, options, cpuOf(url === naive.url ? naive.process : undefined));
      const before = helloRuns.at(-1)!;
      const after = await measureHello(false);
      helloRuns.push(after);
      const baseline = {
        requestsPerSecond: (before.requestsPerSecond + after.requestsPerSecond) / 2,
        p99Ms: (before.p99Ms + after.p99Ms) / 2,
      };
      const { cpu, answered, ...figures } = result;
      measured.push({
        ...figures,
        baseline,
        ratio: ratioTo(result.requestsPerSecond, baseline.requestsPerSecond),
        ...cpuPerRequest(cpu, answered, request.positions),
      });
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
    const gatewayRss = peakRss.gateway ?? null;

    const byName = (name: string) => scenarios.find((scenario) => scenario.name.startsWith(name))!;
    const trip = byName('trip create, JSON');
    const batch = byName('trip batch');
    // Positions per second against single posts per second, each taken relative to its own hello-world
    // runs, so that a drift of the host between the two scenarios cancels out.
    const batchGain = ratioTo(ratioTo(batch.positionsPerSecond ?? 0, batch.baseline.requestsPerSecond), trip.ratio);
    const lastLocation = byName('last-location read');
    const historyPage = byName('history page');
    const tripCreateBefore = (() => {
      const run = lastRunBeforePartitioning(options.history ?? [], options.connections);
      const ratio = run?.scenarios.find((scenario) => scenario.name === trip.name)?.ratio;
      return run && ratio ? { startedAt: run.startedAt, ratio } : undefined;
    })();
    const targets: Target[] = [
      {
        what: 'category read / hello-world',
        value: byName('category read').ratio,
        target: '>= 0.8',
        met: byName('category read').ratio >= 0.8,
      },
      { what: 'trip create / hello-world', value: trip.ratio, target: '>= 0.5', met: trip.ratio >= 0.5 },
      // Each as a ratio to its own hello-world run, so that a drift of the host between the two cancels out.
      {
        what: 'trip create / naive design',
        value: ratioTo(trip.ratio, byName('naive').ratio),
        target: '>= 1',
        met: trip.ratio >= byName('naive').ratio,
      },
      {
        what: 'errors, all scenarios',
        value: scenarios.reduce((sum, s) => sum + s.errors, 0),
        target: '= 0',
        met: scenarios.every((s) => s.errors === 0),
      },
      {
        what: 'trip create p99 / hello-world p99',
        value: trip.p99Ms / Math.max(trip.baseline.p99Ms, 1),
        target: '<= 4',
        met: trip.p99Ms <= 4 * Math.max(trip.baseline.p99Ms, 1),
      },
      { what: 'trip batch positions/s / trip create req/s', value: batchGain, target: '>= 8x', met: batchGain >= 8 },
      { what: 'last-location read / hello-world', value: lastLocation.ratio, target: '>= 0.7', met: lastLocation.ratio >= 0.7 },
      { what: 'history page p99 (ms)', value: historyPage.p99Ms, target: '< 20', met: historyPage.p99Ms < 20 },
      // Ratios to hello-world, not req/s: the two runs may be on hosts of different speeds.
      ...(tripCreateBefore
        ? [
            {
              what: 'trip create / hello-world, against the last run before partitioning',
              value: trip.ratio / tripCreateBefore.ratio,
              target: '>= 1',
              met: trip.ratio >= tripCreateBefore.ratio,
            },
          ]
        : []),
      ...(gatewayRss === null ? [] : [{ what: 'gateway peak RSS (MiB)', value: gatewayRss, target: '<= 200', met: gatewayRss <= 200 }]),
    ];

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
      settings: { connections: options.connections, durationSeconds: options.durationSeconds, warmupSeconds: options.warmupSeconds },
      volume,
      ...(tripCreateBefore ? { tripCreateBefore } : {}),
      scenarios,
      helloWorldRuns: helloRuns.map((run) => run.requestsPerSecond),
      peakRssMiB: peakRss,
      targets,
    };
  } finally {
    await stopAll();
  }
}

export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  if (new URL(databaseUrl).pathname.includes('bench')) await dropDatabase(databaseUrl);
}

// The benchmark: brings up the stack as production runs it (separate processes) beside two baselines,
// drives each with autocannon at a fixed concurrency, and reports every rate as a ratio to a bare
// express hello-world measured in the same run, so figures compare across machines. A shared host's
// speed drifts within a run (hello-world alone moved from 4,200 to 5,600 req/s between runs minutes
// apart), so hello-world is measured before and after each scenario, and each ratio is to the mean of
// the two runs around it.
import { type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { dropDatabase, ensureDatabase } from '@fleet/shared/db/pool';
import { MANY_DEVICES_BATCH, ratioTo } from './targets';
import { LIVE_STREAMS_SCENARIO, measureFollowedCreates } from './live-streams';
import { type ScaleOut } from './scale-out';
import { localBrokerPid, postgresPids } from './process-cpu';
import { DAY_MS, ensureDailyPartitions, generateVolume, isTripLocationsPartitioned } from './volume';
import { assembleReport } from './assemble-report';
import { benchClients } from './bench-requests';
import { startBenchStack, type BenchBroker } from './bench-stack';
import { runScaleOutScenarios, type RunningTwins } from './scale-out-scenarios';
import type { BenchOptions, BenchReport, ScenarioResult } from './bench-types';
import { load, serviceProcesses, startBaseline, WRITE_PATH_WARMUP_SECONDS, type Drive, type LoadRequest } from './load-driver';
import {
  BATCH_POSITIONS,
  DEVICES_PATH,
  TELTONIKA_RECORDS_PER_PACKET,
  aggregatedBatch,
  anyDevice,
  benchStart,
  bufferedTrack,
  formOf,
  historyPagePath,
  measureTeltonika,
  registerBenchDevices,
  uniqueGroupName,
  uniqueTrip,
} from './bench-requests';
import { cpuPerRequest, measure, repliesSettled, type CpuOf, type Measured } from './measure';

/** How long a followed create's event may take to arrive before the bench counts it missing. */

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const apiKey = options.apiKey ?? `bench-${randomBytes(12).toString('hex')}`;
  const jwtSecret = options.jwtSecret ?? randomBytes(32).toString('base64url');
  const startedAt = new Date().toISOString();
  const stopList: ChildProcess[] = [];
  /** The scale-out's added gateways and trip-writers while they run. */
  const running: RunningTwins = { scaleOut: [] };
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
  let broker: BenchBroker = { name: 'that of the stack at the target URL', pid: null };
  let launcher: ChildProcess | undefined;
  /** The started stack's Teltonika listener; none against a stack at a target URL. */
  let teltonikaPort: number | undefined;
  try {
    if (!gatewayUrl) {
      const stack = await startBenchStack(options, { apiKey, jwtSecret }, stopList);
      ({ launcher, gatewayUrl, teltonikaPort, broker } = stack);
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

    const { bearer, json, batchOf, tripCreateJson } = await benchClients(jwtSecret);

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
          body: () => JSON.stringify({ vehicleGroupName: uniqueGroupName(), vehicleIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }),
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
    if (broker.pid === null && launcher && options.kafkaBrokers) broker.pid = localBrokerPid(options.kafkaBrokers);
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
          'event-processor': pidsOf(services['event-processor']),
          broker: pidsOf(broker.pid),
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

    await measureFollowedCreates(gatewayUrl, bearer, tripCreateJson, (request) =>
      runScenario(LIVE_STREAMS_SCENARIO, gatewayUrl!, request, cpuOf()).then(() => measured.at(-1)!),
    );

    // Teltonika devices over TCP: one connection per device, packets of 10 records. The listener stands
    // in the gateway's column, as the process that takes the positions in.
    if (teltonikaPort !== undefined && services.teltonika) {
      const listenerCpu: CpuOf = { ...cpuOf(), sources: { ...cpuOf().sources, gateway: pidsOf(services.teltonika) } };
      const register = () => registerBenchDevices(gatewayUrl!, bearer, options.connections);
      await record(await measureTeltonika(teltonikaPort, register, options, listenerCpu), TELTONIKA_RECORDS_PER_PACKET);
    }

    // Scale-out, then replication: only a stack started here has processes to copy.
    if (services.gateway && services['trip-writer']) {
      await runScaleOutScenarios({
        options,
        gatewayUrl,
        pids: { gateway: services.gateway, tripWriter: services['trip-writer'] },
        tripCreateJson,
        createThrough: async (url) => {
          const response = await fetch(`${url}/fleet/api/v1/trip-location`, {
            method: 'POST',
            headers: { ...bearer(), ...json },
            body: JSON.stringify(uniqueTrip()),
          });
          await response.arrayBuffer();
          return response.status;
        },
        runScenario,
        cpuOf,
        running,
      });
    }
    return assembleReport({ options, startedAt, broker: broker.name, volume, helloRuns, measured, services });
  } finally {
    // The added gateways and trip-writers first: the trip-writers leave their group while the broker runs.
    for (const twins of running.scaleOut) await twins.stop();
    await stopAll();
  }
}

export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  if (new URL(databaseUrl).pathname.includes('bench')) await dropDatabase(databaseUrl);
}

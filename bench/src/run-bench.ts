// The benchmark: brings up the stack as production runs it (separate processes) beside two baselines,
// drives each with autocannon at a fixed concurrency, and reports every rate as a ratio to a bare
// express hello-world measured in the same run, so figures compare across machines. A shared host's
// speed drifts within a run (hello-world alone moved from 4,200 to 5,600 req/s between runs minutes
// apart), so hello-world is measured before and after each scenario, and each ratio is to the mean of
// the two runs around it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SignJWT } from 'jose';
import { Pool } from 'pg';
import { dropDatabase, ensureDatabase } from '@fleet/shared/db/pool';
import { lastRunBeforePartitioning } from './history';
import { benchTargets, MANY_DEVICES_BATCH, ratioTo } from './targets';
import { followedDevices, LiveStreams, LIVE_STREAMS_SCENARIO } from './live-streams';
import { capacityModel } from './capacity';
import { startReplicated, type Replicated } from './replicated';
import {
  postsAnswered,
  REPLICATED_SCENARIO,
  SCALE_OUT_FOUR,
  SCALE_OUT_ONE,
  SCALE_OUT_TWO,
  startScaleOut,
  type ScaleOut,
} from './scale-out';
import { addCpu, localBrokerPid, perUnit, postgresPids } from './process-cpu';
import { DAY_MS, ensureDailyPartitions, generateVolume, isTripLocationsPartitioned } from './volume';
import { freePort } from '@fleet/local-stack/local-ports';
import type { BenchOptions, BenchReport, ScenarioResult } from './bench-types';
import { load, peakRssMiB, repoRoot, serviceProcesses, startBaseline, waitReady, type Drive, type LoadRequest } from './load-driver';
import {
  BATCH_POSITIONS,
  BENCH_DEVICE_TOKENS,
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
  tripOfOneOf,
  uniqueGroupName,
  uniqueTrip,
} from './bench-requests';
import { cpuPerRequest, measure, repliesSettled, type CpuOf, type Measured } from './measure';

/** Trip creates sent before the first scenario, so that no scenario measures the broker's JIT warm-up. */
const WRITE_PATH_WARMUP_SECONDS = 20;
/** How long a followed create's event may take to arrive before the bench counts it missing. */
const STREAM_SETTLE_MS = 10_000;

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
          body: () => JSON.stringify(tripOfOneOf(devices)),
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

// `npm start`: the whole stack on one machine, as in production: a broker (Apache Kafka, unless
// KAFKA_BROKERS names one), the topics, the migrations, then GATEWAY_REPLICAS gateways (gateway i on
// PORT + i), TRIP_WRITER_REPLICAS trip-writers, a group-writer, EVENT_PROCESSOR_REPLICAS event
// processors and the Teltonika listener (devices on
// TELTONIKA_PORT, 5027; 0 leaves it out) as supervised processes: one that
// crashes is started again with a growing pause, as compose's `restart: unless-stopped` and Kubernetes
// do, while the others keep serving. Ctrl-C (or SIGTERM) stops every process it started, broker included.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '@fleet/shared/config';
import { migrate } from '@fleet/shared/db/migrate';
import { redactUrl } from '@fleet/shared/db/pool';
import { createKafka } from '@fleet/shared/kafka/client';
import { clusterReplicationFactor, ensureTopics } from '@fleet/shared/kafka/topics';
import { createLogger } from '@fleet/shared/logger';
import { commandStopDeadlineMs, DEFAULT_STOP_DEADLINE_MS, KILL_MARGIN_MS } from '@fleet/shared/stop-deadline';
import { defaultDataDir, javaToolsPresent, JAVA_TOOLS_HINT, startLocalKafka } from './apache-kafka';
import { assertPortBindable } from './local-ports';
import { assertServicePortsFree, instancesOf, launcherEnv, type Instance, type LauncherConfig, type Service } from './stack-layout';
import { keepClusterRunning, keepLocalKafkaRunning } from './broker-watchdog';
import { localKafkaCluster } from './kafka-cluster';
import { devCredential, repoRoot } from './dev-secret';
import { serviceEntry, serviceNodeArgs } from './service-node-args';
import { KCAT_INSTALL_HINT, kcatAvailable, mockKafkaClientEnv, startMockKafka } from './mock-kafka';

const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A service that ran this long before crashing starts again after the shortest pause. */
const HEALTHY_RUN_MS = 60_000;

const logger = createLogger('stack');

interface Broker {
  brokers: string[];
  /** Client settings the broker needs besides the defaults (the mock's). */
  clientEnv: Record<string, string>;
  provision: boolean;
  stop(): Promise<void>;
}

/** KAFKA_BROKERS when set; else the development Apache Kafka (as `npm run kafka:up`); else the mock. */
async function chooseBroker(config: LauncherConfig): Promise<Broker> {
  if (config.KAFKA_BROKERS) {
    logger.info({ brokers: config.KAFKA_BROKERS }, 'broker: the Kafka at KAFKA_BROKERS');
    return { brokers: config.KAFKA_BROKERS.split(','), clientEnv: {}, provision: true, stop: async () => undefined };
  }
  if (javaToolsPresent() && config.KAFKA_BROKER_COUNT === 3) {
    const cluster = localKafkaCluster({ dataDir: defaultDataDir, port: config.KAFKA_PORT });
    const runningBefore = cluster.nodes.some((node) => node.pid() !== undefined);
    await cluster.up();
    logger.info({ brokers: cluster.brokers }, `broker: a replicated Apache Kafka of ${cluster.nodes.length} nodes on this machine`);
    // A cluster that was already running (npm run kafka:up) is left running, and left to whoever started it.
    if (runningBefore) return { brokers: cluster.brokers, clientEnv: {}, provision: true, stop: () => Promise.resolve() };
    const { stop } = keepClusterRunning(cluster, logger);
    return { brokers: cluster.brokers, clientEnv: {}, provision: true, stop };
  }
  if (javaToolsPresent()) {
    const kafka = await startLocalKafka({ dataDir: defaultDataDir, port: config.KAFKA_PORT });
    logger.info(
      { brokers: kafka.brokers, pid: kafka.pid, data: path.relative(repoRoot, defaultDataDir) },
      `broker: Apache Kafka ${kafka.version}, ${kafka.startedHere ? 'started' : 'already running'} on this machine`,
    );
    // A broker that was already running (npm run kafka:up) is left running, and left to whoever started it.
    if (!kafka.startedHere) return { brokers: kafka.brokers, clientEnv: {}, provision: true, stop: () => Promise.resolve() };
    const { stop } = keepLocalKafkaRunning(kafka, logger);
    return { brokers: kafka.brokers, clientEnv: {}, provision: true, stop };
  }
  if (!kcatAvailable()) throw new ConfigError(`${JAVA_TOOLS_HINT}. ${KCAT_INSTALL_HINT}`);
  const mock = await startMockKafka({ brokerCount: 1 });
  logger.warn(
    { brokers: mock.brokers },
    `broker: librdkafka's mock cluster (kcat ${mock.version}), because Java and Maven are missing. It keeps nothing on disk ` +
      'and differs from Kafka; install Java 17+ and Maven for Apache Kafka, or set KAFKA_BROKERS.',
  );
  return { brokers: mock.brokers, clientEnv: { ...mockKafkaClientEnv }, provision: false, stop: () => mock.stop() };
}

async function provisionTopics(brokers: string[], prefix: string): Promise<void> {
  const admin = createKafka({ brokers, clientId: 'fleet-stack', logger }).admin();
  await admin.connect();
  try {
    const topics = await ensureTopics(admin, { prefix, replicationFactor: await clusterReplicationFactor(admin) });
    logger.info({ topics: topics.map((topic) => `${topic.topic}:${topic.partitions}`) }, 'topics ready');
  } finally {
    await admin.disconnect();
  }
}

/** Probes each gateway this launcher started, once that process has said it listens. */
async function waitForReady(ports: readonly number[], gatewaysStarted: Promise<unknown>, isStopping: () => boolean): Promise<void> {
  await gatewaysStarted;
  const deadline = Date.now() + 120_000;
  const waiting = new Set(ports);
  while (waiting.size > 0 && Date.now() < deadline && !isStopping()) {
    for (const port of waiting) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) waiting.delete(port);
    }
    if (waiting.size > 0) await sleep(500);
  }
  if (waiting.size === 0) {
    const urls = ports.map((port) => `http://localhost:${port}`).join(', ');
    logger.info(`stack is ready: ${urls} (GET /readyz is 200)`);
  }
}

/** Runs a one-shot step (a CLI of the project) to completion; true when it exited 0. */
function runOnce(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      if (code !== 0) logger.warn({ code }, `${name} step failed`);
      resolve(code === 0);
    });
  });
}

async function main(): Promise<void> {
  const config = loadConfig(launcherEnv);
  const env: NodeJS.ProcessEnv = { ...process.env };
  const instances = instancesOf(config);
  await assertServicePortsFree(instances);

  const broker = await chooseBroker(config);
  env.KAFKA_BROKERS = broker.brokers.join(',');
  for (const [name, value] of Object.entries(broker.clientEnv)) env[name] ??= value;

  const development = config.NODE_ENV !== 'production';
  if (development && !env.JWT_SECRET && !env.JWT_PUBLIC_KEY && !env.JWKS_URL) {
    const secret = devCredential('jwt-secret');
    env.JWT_SECRET = secret.value;
    logger.warn(
      `no JWT key configured: ${secret.created ? 'generated' : 'using'} a development secret stored in ${secret.file}; ` +
        'mint a token with `npm run dev-token`',
    );
  }
  if (development && !env.API_KEYS) {
    const key = devCredential('api-key');
    env.API_KEYS = key.value;
    logger.warn(`no API_KEYS configured: category reads accept the development key stored in ${key.file}`);
  }

  try {
    if (broker.provision) await provisionTopics(broker.brokers, config.KAFKA_TOPIC_PREFIX);
  } catch (error) {
    logger.fatal(`cannot provision the topics on ${broker.brokers.join(',')}: ${(error as Error).message}`);
    await broker.stop();
    process.exit(1);
  }
  try {
    await migrate(config.DATABASE_URL, createLogger('migrate', config.LOG_LEVEL));
  } catch (error) {
    logger.fatal(`migrations failed on ${redactUrl(config.DATABASE_URL)}: ${(error as Error).message}`);
    await broker.stop();
    process.exit(1);
  }

  if (development) {
    // Example categories, so a category read answers on a fresh machine; production data comes from
    // `npm run categories -- import`, never from migrations.
    const seeded = await runOnce(
      'categories',
      ['services/gateway/dist/cli/categories.js', 'import', 'deploy/local/seed/categories.json'],
      env,
    );
    if (!seeded) logger.warn('could not import the example categories; the stack starts without them');
  }

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const gatewayStarts = new Map<string, () => void>();
  const hasStarted = new Set<string>();
  const gatewaysStarted = Promise.all(
    instances
      .filter((instance) => instance.service === 'gateway')
      .map((instance) => new Promise<void>((resolve) => gatewayStarts.set(instance.name, resolve))),
  );
  // Each service stops by its own deadline (the gateway's drains for REPLY_TIMEOUT_MS + 1 s); SIGKILL is
  // only for one that failed to.
  const stopGraceMs: Record<Service, number> = {
    gateway: commandStopDeadlineMs(config.REPLY_TIMEOUT_MS) + KILL_MARGIN_MS,
    teltonika: commandStopDeadlineMs(config.REPLY_TIMEOUT_MS) + KILL_MARGIN_MS,
    'trip-writer': DEFAULT_STOP_DEADLINE_MS + KILL_MARGIN_MS,
    'group-writer': DEFAULT_STOP_DEADLINE_MS + KILL_MARGIN_MS,
    'event-processor': DEFAULT_STOP_DEADLINE_MS + KILL_MARGIN_MS,
  };

  /** Sends SIGTERM and waits for the exit, or SIGKILLs after the service's grace period. */
  const stopChild = ({ name, service }: Instance) =>
    new Promise<void>((resolve) => {
      const child = children.get(name);
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      const forced = setTimeout(() => child.kill('SIGKILL'), stopGraceMs[service]);
      child.once('exit', () => {
        clearTimeout(forced);
        resolve();
      });
      child.kill('SIGTERM');
    });

  const stopAll = async (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the stack');
    // What takes positions from outside first (the gateways, the Teltonika listener): their in-flight
    // requests still get their replies while the writers run.
    const edge = (instance: Instance) => instance.service === 'gateway' || instance.service === 'teltonika';
    await Promise.all(instances.filter(edge).map(stopChild));
    await Promise.all(instances.filter((instance) => !edge(instance)).map(stopChild));
    await broker.stop();
    logger.info('stack stopped');
    process.exit(exitCode);
  };

  const launch = (instance: Instance, crashes: number) => {
    const { name, service, port, devicePort } = instance;
    const listen =
      service === 'gateway'
        ? { PORT: String(port) }
        : { METRICS_PORT: String(port), ...(devicePort === undefined ? {} : { TELTONIKA_PORT: String(devicePort) }) };
    const startedAt = Date.now();
    const child = spawn(
      process.execPath,
      [...serviceNodeArgs(service), ...config.STACK_NODE_ARGS, path.join(repoRoot, serviceEntry[service])],
      {
        env: { ...env, ...listen },
        // A process group of its own, so a terminal's Ctrl-C reaches only this launcher, which stops
        // the services in order; the IPC channel tells a service when the launcher itself is gone.
        detached: true,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    children.set(name, child);
    child.on('message', (message: { event?: string }) => {
      if (service !== 'gateway' || message.event !== 'started') return;
      hasStarted.add(name);
      gatewayStarts.get(name)?.();
    });
    child.once('exit', (code, signal) => {
      children.delete(name);
      if (stopping) return;
      if (service === 'gateway' && !hasStarted.has(name)) {
        // A gateway that never started may have lost its port to another process since the check: then
        // no restart can help, and the stack says so rather than crash-looping.
        void assertPortBindable(port, '::').catch((error: Error) => {
          logger.fatal(`${name} cannot listen: ${instance.portVariable}=${port} is in use by another process (${error.message})`);
          void stopAll(`${name} cannot listen`, 1);
        });
      }
      const recent = Date.now() - startedAt < HEALTHY_RUN_MS ? crashes + 1 : 1;
      const pauseMs = Math.min(FIRST_RESTART_DELAY_MS * 2 ** (recent - 1), MAX_RESTART_DELAY_MS);
      logger.error(
        { process: name, code, signal, restartInMs: pauseMs, crashes: recent },
        `${name} exited unexpectedly; starting it again`,
      );
      setTimeout(() => {
        if (!stopping) launch(instance, recent);
      }, pauseMs);
    });
  };

  for (const instance of instances) launch(instance, 0);
  process.on('SIGINT', () => void stopAll('SIGINT'));
  process.on('SIGTERM', () => void stopAll('SIGTERM'));
  const gatewayPorts = instances.filter((instance) => instance.service === 'gateway').map((instance) => instance.port);
  await waitForReady(gatewayPorts, gatewaysStarted, () => stopping);
}

main().catch((error: Error) => {
  logger.fatal(error instanceof ConfigError ? error.message : `cannot start the stack: ${error.message}`);
  process.exit(1);
});

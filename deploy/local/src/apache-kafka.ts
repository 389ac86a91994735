// A real Apache Kafka on this machine, for development, tests and the benchmark: the broker's jars are
// resolved from Maven Central with Maven into a git-ignored cache and run as one KRaft node (broker and
// controller in one JVM) with a small heap. Its data stays in the directory it is given, so starting it
// again on that directory is a real recovery. The one place the Kafka version is pinned.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { repoRoot } from './dev-secret';
import { isAlive, jmxFlags, readPid, spawnBroker, stopPid } from './jvm-process';
import { assertPortBindable } from './local-ports';

/** Equal to the apache/kafka image of docker-compose.yml and the Kubernetes files (a test checks it). */
export const KAFKA_VERSION = '3.9.0';

export const JAVA_TOOLS_HINT =
  'Apache Kafka needs Java 17+ and Maven: sudo apt-get install -y openjdk-17-jre-headless maven  (or set KAFKA_BROKERS to a running Kafka)';

/** The development broker's home for `npm start` and `npm run kafka:up`. */
export const defaultDataDir = path.join(repoRoot, '.dev', 'kafka');

export const KAFKA_DIR = path.join(repoRoot, 'deploy', 'local', 'kafka');
const HEAP = ['-Xmx512m', '-Xms128m'];
const READY_TIMEOUT_MS = 120_000;

export interface LocalKafkaOptions {
  /** Holds the broker's log directory, settings, pid and its own log. */
  dataDir: string;
  port: number;
  /** The KRaft controller's port; the broker's port + 1 by default. */
  controllerPort?: number;
  /** Ends the broker when this process ends, however it ends (tests); otherwise it runs on by itself. */
  tiedToThisProcess?: boolean;
  /** Opens the broker's MBeans on this loopback port (the benchmark's request counts); off by default. */
  jmxPort?: number;
}

export interface LocalKafka {
  brokers: string[];
  pid: number;
  version: string;
  /** False when a broker was already running on this data directory and was reused. */
  startedHere: boolean;
  options: LocalKafkaOptions;
  /** Sends a signal to the JVM, for fault injection. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, a wait for the broker's controlled shutdown, then SIGKILL. */
  stop(): Promise<void>;
}

export function javaToolsPresent(): boolean {
  const works = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 }).status === 0;
  return works('java', ['-version']) && works('mvn', ['-v']);
}

/**
 * The broker's and tools' jars, resolved once per version and pom into .dev/kafka-dist/<version>-<pom
 * hash>/: a pom that gains a dependency is resolved again rather than served an older copy.
 */
export function resolveKafkaJars(version = KAFKA_VERSION): string {
  const pomHash = createHash('sha256')
    .update(readFileSync(path.join(KAFKA_DIR, 'pom.xml')))
    .digest('hex')
    .slice(0, 8);
  const target = path.join(repoRoot, '.dev', 'kafka-dist', `${version}-${pomHash}`);
  if (existsSync(path.join(target, 'complete'))) return target;
  const staging = `${target}.${process.pid}.${randomBytes(3).toString('hex')}`;
  const result = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      path.join(KAFKA_DIR, 'pom.xml'),
      `-Dkafka.version=${version}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${path.join(staging, 'lib')}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  if (result.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `Maven could not resolve Apache Kafka ${version}: ${(result.stdout + result.stderr).trim().split('\n').slice(-5).join(' | ')}`,
    );
  }
  writeFileSync(path.join(staging, 'complete'), `${version}\n`);
  try {
    renameSync(staging, target);
  } catch {
    // Another process resolved the same version meanwhile; its copy is as good.
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/** The broker port a data directory's running broker was configured with, from its server.properties. */
function configuredPort(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'server.properties');
  if (!existsSync(file)) return undefined;
  const match = /^listeners=PLAINTEXT:\/\/[^:]+:(\d+)/m.exec(readFileSync(file, 'utf8'));
  return match ? Number(match[1]) : undefined;
}

/** The cluster id a data directory was formatted with. */
function formattedClusterId(logDir: string): string | undefined {
  const file = path.join(logDir, 'meta.properties');
  if (!existsSync(file)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
}

function serverProperties(options: LocalKafkaOptions, logDir: string): string {
  const controllerPort = options.controllerPort ?? options.port + 1;
  // The broker settings of docker-compose.yml: topics only from provisioning, one replica, no delay
  // before a new group's first rebalance.
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${options.port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${options.port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${logDir}`,
    'auto.create.topics.enable=false',
    'offsets.topic.replication.factor=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    '',
  ].join('\n');
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64; it refuses one starting with "-". */
export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** Waits until the brokers answer a metadata request, and resolves with the cluster id they answer for. */
async function answersMetadata(brokers: string[], deadline: number, stillStarting: () => boolean): Promise<string> {
  const admin = new Kafka({ clientId: 'fleet-local-kafka', brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    for (;;) {
      try {
        await admin.connect();
        const { clusterId } = await admin.describeCluster();
        return clusterId;
      } catch (error) {
        if (!stillStarting()) throw new Error('the broker exited while starting', { cause: error });
        if (Date.now() > deadline)
          throw new Error(`no metadata answer within ${READY_TIMEOUT_MS / 1000} s: ${(error as Error).message}`, { cause: error });
        await admin.disconnect().catch(() => undefined);
        await sleep(250);
      }
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

function handle(options: LocalKafkaOptions, pid: number, version: string, startedHere: boolean, release = () => {}): LocalKafka {
  const pidFile = path.join(options.dataDir, 'broker.pid');
  return {
    brokers: [`127.0.0.1:${options.port}`],
    pid,
    version,
    startedHere,
    options,
    signal: (signal) => process.kill(pid, signal),
    async stop() {
      await stopPid(pid, pidFile);
      release();
    },
  };
}

/**
 * Starts the broker on its data directory, or reuses the one already running there; resolves once it
 * answers a metadata request.
 */
export async function startLocalKafka(options: LocalKafkaOptions): Promise<LocalKafka> {
  if (!javaToolsPresent()) throw new Error(JAVA_TOOLS_HINT);
  const { dataDir } = options;
  const pidFile = path.join(dataDir, 'broker.pid');
  const versionFile = path.join(dataDir, 'broker.version');
  const brokers = [`127.0.0.1:${options.port}`];

  const logDir = path.join(dataDir, 'log');
  const notOurs = (clusterId: string) =>
    new Error(
      `the broker answering on ${brokers[0]} is not the one of ${dataDir} (cluster id ${clusterId}, expected ` +
        `${formattedClusterId(logDir)}): another checkout's broker? Stop it, or choose another KAFKA_PORT`,
    );

  const running = readPid(pidFile);
  if (running !== undefined && isAlive(running)) {
    const runningPort = configuredPort(dataDir);
    if (runningPort !== undefined && runningPort !== options.port) {
      throw new Error(
        `the Apache Kafka of ${dataDir} already runs on 127.0.0.1:${runningPort} (pid ${running}), not on port ${options.port}: ` +
          `use KAFKA_PORT=${runningPort}, or stop it first (npm run kafka:down)`,
      );
    }
    const clusterId = await answersMetadata(brokers, Date.now() + READY_TIMEOUT_MS, () => isAlive(running));
    if (clusterId !== formattedClusterId(logDir)) throw notOurs(clusterId);
    const version = existsSync(versionFile) ? readFileSync(versionFile, 'utf8').trim() : KAFKA_VERSION;
    return handle(options, running, version, false);
  }

  // A port held by anything else (another checkout's broker, any server) is refused at once: a JVM
  // started on it dies on "Address already in use" while the other answers in its place.
  const controllerPort = options.controllerPort ?? options.port + 1;
  for (const [port, role] of [
    [options.port, 'broker'],
    [controllerPort, 'controller'],
  ] as const) {
    try {
      await assertPortBindable(port);
    } catch (error) {
      throw new Error(
        `cannot start Apache Kafka: port ${port} (its ${role} port) is in use by another process (${(error as Error).message})`,
        {
          cause: error,
        },
      );
    }
  }

  const dist = resolveKafkaJars();
  const classpath = path.join(dist, 'lib', '*');
  const log4j = `-Dlog4j.configuration=file:${path.join(KAFKA_DIR, 'log4j.properties')}`;
  mkdirSync(logDir, { recursive: true });
  const propertiesFile = path.join(dataDir, 'server.properties');
  writeFileSync(propertiesFile, serverProperties(options, logDir));

  // Formatting writes the cluster id into the log directory once; the data then outlives restarts.
  if (!existsSync(path.join(logDir, 'meta.properties'))) {
    const format = spawnSync(
      'java',
      [log4j, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', propertiesFile],
      {
        encoding: 'utf8',
      },
    );
    if (format.status !== 0) throw new Error(`cannot format ${logDir}: ${(format.stdout + format.stderr).trim()}`);
  }

  const java = [
    'java',
    ...HEAP,
    ...jmxFlags(options.jmxPort),
    '-Djava.awt.headless=true',
    log4j,
    '-cp',
    classpath,
    'kafka.Kafka',
    propertiesFile,
  ];
  const { pid, exited, release } = await spawnBroker(java, path.join(dataDir, 'broker.log'), options.tiedToThisProcess ?? false);
  writeFileSync(pidFile, `${pid}\n`);
  writeFileSync(versionFile, `${KAFKA_VERSION}\n`);

  try {
    const clusterId = await answersMetadata(brokers, Date.now() + READY_TIMEOUT_MS, () => !exited() && isAlive(pid));
    if (clusterId !== formattedClusterId(logDir)) throw notOurs(clusterId);
  } catch (error) {
    await stopPid(pid, pidFile);
    const tail = readFileSync(path.join(dataDir, 'broker.log'), 'utf8').trim().split('\n').slice(-5).join(' | ');
    throw new Error(`Apache Kafka did not start on ${brokers[0]}: ${(error as Error).message}; broker.log: ${tail}`, { cause: error });
  }
  return handle(options, pid, KAFKA_VERSION, true, release);
}

/** Stops the broker running on a data directory, if any; true when one was running. */
export async function stopLocalKafka(dataDir: string): Promise<boolean> {
  const pidFile = path.join(dataDir, 'broker.pid');
  const pid = readPid(pidFile);
  if (pid === undefined || !isAlive(pid)) {
    rmSync(pidFile, { force: true });
    return false;
  }
  await stopPid(pid, pidFile);
  return true;
}

// A replicated Apache Kafka on this machine: three KRaft nodes, each broker and controller in one JVM,
// on KAFKA_PORT, +1 and +2 (their controllers on the three ports after), for the replicated shape
// production runs (`KAFKA_BROKER_COUNT=3 npm run kafka:up`, and the fault tests of one broker down).
// Each node keeps its data in <dataDir>/node-<id>/ and its pid in <dataDir>/broker-<id>.pid; starting the
// cluster again starts whichever nodes are not running, on their data.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPLICATED } from '@fleet/shared/kafka/topics';
import { Kafka, logLevel } from 'kafkajs';
import { clusterId, JAVA_TOOLS_HINT, javaToolsPresent, KAFKA_DIR, KAFKA_VERSION, resolveKafkaJars } from './apache-kafka';
import { isAlive, jmxFlags, readPid, spawnBroker, stopPid } from './jvm-process';
import { assertPortBindable, freePortRun } from './local-ports';

export const CLUSTER_NODES = 3;
/** How soon the controller fences a node that stopped heartbeating (see the properties below). */
const BROKER_SESSION_TIMEOUT_MS = 2000;
/**
 * The single node's heap: with 256 MiB a node under load paused long enough to miss its heartbeats to the
 * controller and be fenced, leaving partitions with two in-sync replicas.
 */
const NODE_HEAP = ['-Xmx512m', '-Xms128m'];
const READY_TIMEOUT_MS = 120_000;
/** Checks, 250 ms apart, that must all see every node registered before the cluster counts as up. */
const STEADY_CHECKS = 8;

export interface ClusterOptions {
  dataDir: string;
  /** Node 1's broker port; node n's is port + n - 1. */
  port: number;
  /** Ends the nodes when this process ends, however it ends (tests); otherwise they run on by themselves. */
  tiedToThisProcess?: boolean;
  /** Node n opens its MBeans on jmxPort + n - 1 (the benchmark's request counts); off by default. */
  jmxPort?: number;
}

export interface ClusterNode {
  nodeId: number;
  brokerPort: number;
  controllerPort: number;
  pid(): number | undefined;
  signal(signal: NodeJS.Signals): void;
}

export interface LocalKafkaCluster {
  brokers: string[];
  nodes: ClusterNode[];
  /** Starts the nodes that are not running (all of them the first time); resolves once all answer. */
  up(): Promise<void>;
  /** Stops every node. */
  down(): Promise<void>;
}

/** As production: three replicas, a write acknowledged by two of them, the internal topics included. */
export const clusterReplication = {
  'default.replication.factor': REPLICATED.replicationFactor,
  'min.insync.replicas': REPLICATED.minInsyncReplicas,
  'offsets.topic.replication.factor': REPLICATED.replicationFactor,
  'transaction.state.log.replication.factor': REPLICATED.replicationFactor,
  'transaction.state.log.min.isr': REPLICATED.minInsyncReplicas,
} as const;

/**
 * How soon the controller fences a node that stopped heartbeating and moves the leadership of its
 * partitions (the group coordinators' too) to the two left; until then every acks=all write waits for
 * it, since each partition has a replica on every node. Heartbeats every 500 ms and four missed (Kafka's
 * defaults are 2 s and 9 s): a JVM pausing a second and a half on a busy small machine is still not fenced.
 * When the node that died was also the active controller, the other two first notice it (the quorum's
 * fetch timeout), elect one of them (its election timeout), and the new controller then gives every
 * node a whole session: with Kafka's 2 s and 1 s and a 6 s session, writes waited 8 to 10 s for the
 * fencing alone. The two notice it at the same moment and both stand, so the first vote is split
 * nearly always; the next comes after a random wait between one and two election timeouts and a
 * backoff, so both are short. With a 3 s session and a 0.5 s election timeout (backoff up to Kafka's
 * 1 s) a frozen controller was fenced 4.3 to 5.3 s after it froze, and writes waited up to 6.3 s under
 * load and 13.5 s once in CI, past the 6 s a write's budget allows. The new controller still waits a
 * whole session after its election, so the session is most of a frozen controller's stall: with 2.5 s
 * one was fenced 3.4 to 3.8 s after it froze and writes waited up to 5.4 s in local runs, and a frozen
 * node held writes 8.0 s once in CI.
 * A broker's request to the controller (a block of producer ids, which a new idempotent producer waits
 * for) sent just before it froze is sent to the new one only after controller.socket.timeout.ms: Kafka's
 * 30 s held every new producer 30 s.
 */
export const clusterFailover = {
  'broker.heartbeat.interval.ms': 500,
  'broker.session.timeout.ms': BROKER_SESSION_TIMEOUT_MS,
  'controller.quorum.fetch.timeout.ms': 1000,
  'controller.quorum.election.timeout.ms': 300,
  'controller.quorum.election.backoff.max.ms': 300,
  'controller.socket.timeout.ms': 3000,
} as const;

const nodeIds = Array.from({ length: CLUSTER_NODES }, (_, index) => index + 1);

function properties(options: ClusterOptions, nodeId: number, logDir: string): string {
  const brokerPort = options.port + nodeId - 1;
  const controllerPort = (id: number) => options.port + CLUSTER_NODES + id - 1;
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${nodeIds.map((id) => `${id}@127.0.0.1:${controllerPort(id)}`).join(',')}`,
    `listeners=PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort(nodeId)}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${logDir}`,
    ...Object.entries(clusterReplication).map(([key, value]) => `${key}=${value}`),
    'auto.create.topics.enable=false',
    'group.initial.rebalance.delay.ms=0',
    ...Object.entries(clusterFailover).map(([key, value]) => `${key}=${value}`),
    '',
  ].join('\n');
}

/**
 * A base port with the `count` ports from it free, below the ephemeral range (freePortRun); by default
 * 2 × CLUSTER_NODES, the nodes' broker ports, then their controllers'.
 */
export function freePortRange(count = 2 * CLUSTER_NODES): Promise<number> {
  return freePortRun(count);
}

export function localKafkaCluster(options: ClusterOptions): LocalKafkaCluster {
  const brokers = nodeIds.map((id) => `127.0.0.1:${options.port + id - 1}`);
  const pidFile = (id: number) => path.join(options.dataDir, `broker-${id}.pid`);
  const releases = new Map<number, () => void>();

  async function startNode(nodeId: number, id: string): Promise<void> {
    const nodeDir = path.join(options.dataDir, `node-${nodeId}`);
    const logDir = path.join(nodeDir, 'log');
    mkdirSync(logDir, { recursive: true });
    const brokerPort = options.port + nodeId - 1;
    const controllerPort = options.port + CLUSTER_NODES + nodeId - 1;
    for (const port of [brokerPort, controllerPort]) {
      await assertPortBindable(port).catch((error: Error) => {
        throw new Error(`cannot start Kafka node ${nodeId}: port ${port} is in use by another process (${error.message})`, {
          cause: error,
        });
      });
    }
    const propertiesFile = path.join(nodeDir, 'server.properties');
    writeFileSync(propertiesFile, properties(options, nodeId, logDir));
    const classpath = path.join(resolveKafkaJars(), 'lib', '*');
    const log4j = `-Dlog4j.configuration=file:${path.join(KAFKA_DIR, 'log4j.properties')}`;
    if (!existsSync(path.join(logDir, 'meta.properties'))) {
      const format = spawnSync('java', [log4j, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', id, '-c', propertiesFile], {
        encoding: 'utf8',
      });
      if (format.status !== 0) throw new Error(`cannot format ${logDir}: ${(format.stdout + format.stderr).trim()}`);
    }
    const jmx = jmxFlags(options.jmxPort === undefined ? undefined : options.jmxPort + nodeId - 1);
    const java = ['java', ...NODE_HEAP, ...jmx, '-Djava.awt.headless=true', log4j, '-cp', classpath, 'kafka.Kafka', propertiesFile];
    const { pid, release } = await spawnBroker(java, path.join(nodeDir, 'broker.log'), options.tiedToThisProcess ?? false);
    releases.set(nodeId, release);
    writeFileSync(pidFile(nodeId), `${pid}\n`);
  }

  /**
   * Resolves once every node has stayed a registered broker for STEADY_CHECKS checks in a row (2 s); rejects
   * after READY_TIMEOUT_MS, or at once when a node is no longer running.
   */
  async function allAnswer(): Promise<void> {
    const admin = new Kafka({ clientId: 'fleet-local-kafka', brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let steady = 0;
    try {
      for (;;) {
        try {
          await admin.connect();
          const { brokers: registered } = await admin.describeCluster();
          steady = registered.length === CLUSTER_NODES ? steady + 1 : 0;
          if (steady === STEADY_CHECKS) return;
        } catch {
          steady = 0;
          await admin.disconnect().catch(() => undefined);
        }
        // A node that died (a port taken, the cluster stopped meanwhile) will not answer: say so now.
        const gone = nodeIds.find((nodeId) => {
          const pid = readPid(pidFile(nodeId));
          return pid === undefined || !isAlive(pid);
        });
        if (gone !== undefined)
          throw new Error(`Kafka node ${gone} is not running; its log: ${path.join(options.dataDir, `node-${gone}`, 'broker.log')}`);
        if (Date.now() > deadline)
          throw new Error(`the ${CLUSTER_NODES} Kafka nodes did not all answer within ${READY_TIMEOUT_MS / 1000} s`);
        await sleep(250);
      }
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  return {
    brokers,
    nodes: nodeIds.map((nodeId) => ({
      nodeId,
      brokerPort: options.port + nodeId - 1,
      controllerPort: options.port + CLUSTER_NODES + nodeId - 1,
      pid: () => readPid(pidFile(nodeId)),
      signal(signal) {
        const pid = readPid(pidFile(nodeId));
        if (pid !== undefined) process.kill(pid, signal);
      },
    })),
    async up() {
      if (!javaToolsPresent()) throw new Error(JAVA_TOOLS_HINT);
      mkdirSync(options.dataDir, { recursive: true });
      const idFile = path.join(options.dataDir, 'cluster.id');
      if (!existsSync(idFile)) writeFileSync(idFile, `${clusterId()}\n`);
      const id = readFileSync(idFile, 'utf8').trim();
      writeFileSync(path.join(options.dataDir, 'broker.version'), `${KAFKA_VERSION}\n`);
      for (const nodeId of nodeIds) {
        const pid = readPid(pidFile(nodeId));
        if (pid === undefined || !isAlive(pid)) await startNode(nodeId, id);
      }
      await allAnswer();
    },
    async down() {
      for (const nodeId of nodeIds) {
        const pid = readPid(pidFile(nodeId));
        // A frozen node handles no SIGTERM until it runs again.
        if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGCONT');
        if (pid !== undefined) await stopPid(pid, pidFile(nodeId));
        releases.get(nodeId)?.();
        rmSync(pidFile(nodeId), { force: true });
      }
    },
  };
}

/**
 * The node that is the active KRaft controller now: the leader recorded, at the latest epoch, in the
 * quorum state each node keeps in its log directory (clients' metadata names a random broker instead).
 */
export function activeController(dataDir: string): number | undefined {
  let latest: { leaderId: number; leaderEpoch: number } | undefined;
  for (const nodeId of nodeIds) {
    const file = path.join(dataDir, `node-${nodeId}`, 'log', '__cluster_metadata-0', 'quorum-state');
    if (!existsSync(file)) continue;
    try {
      const state = JSON.parse(readFileSync(file, 'utf8')) as { leaderId?: number; leaderEpoch?: number };
      if (typeof state.leaderId === 'number' && state.leaderId > 0 && typeof state.leaderEpoch === 'number') {
        if (!latest || state.leaderEpoch > latest.leaderEpoch) latest = { leaderId: state.leaderId, leaderEpoch: state.leaderEpoch };
      }
    } catch {
      // Being rewritten; the other nodes say it too.
    }
  }
  return latest?.leaderId;
}

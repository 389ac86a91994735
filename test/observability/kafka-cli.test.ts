// `npm run kafka:up` on a machine without Java or Maven: one line saying what to install, and a non-zero
// exit, rather than a stack trace. And the ports it cannot have: one another server holds, or another
// than the one its data directory's broker already runs on, are refused at once with one line. (Starting
// and stopping the broker is what every test run does through the same startLocalKafka; the CLI's own
// broker lives in the developer's .dev/kafka, which tests leave alone.)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ConfigResourceTypes } from 'kafkajs';
import { createKafka } from '@fleet/shared/kafka/client';
import { clusterReplicationFactor, ensureTopics, topicsFor } from '@fleet/shared/kafka/topics';
import { createLogger } from '@fleet/shared/logger';
import { JAVA_TOOLS_HINT, startLocalKafka } from '../../deploy/local/src/apache-kafka';
import { isAlive } from '../../deploy/local/src/jvm-process';
import { freePort, freePortRun } from '../../deploy/local/src/local-ports';
import { keepClusterRunning, keepLocalKafkaRunning } from '../../deploy/local/src/broker-watchdog';
import { localKafkaCluster, type LocalKafkaCluster } from '../../deploy/local/src/kafka-cluster';
import { eventually } from '../support/eventually';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';

const root = path.resolve(__dirname, '..', '..');
const silent = createLogger('tests', 'silent');

test('kafka:up without Java and Maven on the PATH prints one line naming what to install and exits 1', () => {
  const emptyPath = mkdtempSync(path.join(os.tmpdir(), 'fleet-no-java-'));
  try {
    const result = spawnSync(process.execPath, [path.join(root, 'deploy/local/dist/kafka-cli.js'), 'up'], {
      env: { PATH: emptyPath },
      encoding: 'utf8',
    });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: `${JAVA_TOOLS_HINT}\n`,
    });
  } finally {
    rmSync(emptyPath, { recursive: true, force: true });
  }
});

describe('a port the development broker cannot have', () => {
  let broker: PrivateKafka;
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-kafka-port-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    broker = await startPrivateKafka();
  }, 150_000);
  afterAll(async () => {
    await broker?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a port another server holds is refused at once, naming the port, and no broker is started', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    const dataDir = freshDir();
    try {
      await expect(startLocalKafka({ dataDir, port })).rejects.toThrow(
        new RegExp(`^cannot start Apache Kafka: port ${port} \\(its broker port\\) is in use by another process`),
      );
      expect(existsSync(path.join(dataDir, 'broker.pid'))).toBe(false);
    } finally {
      holder.close();
    }
  });

  test("another data directory's broker on the port is refused, not joined", async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    await expect(startLocalKafka({ dataDir: freshDir(), port, controllerPort: await freePort() })).rejects.toThrow(
      `port ${port} (its broker port) is in use by another process`,
    );
  });

  test('asking for another port while the data directory’s broker runs says at once where it runs', async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    const other = await freePort();
    await expect(startLocalKafka({ dataDir: broker.dataDir, port: other })).rejects.toThrow(
      `already runs on 127.0.0.1:${port} (pid ${broker.pid()}), not on port ${other}: use KAFKA_PORT=${port}`,
    );
  });

  test('the same data directory and port reuses the running broker', async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    const reused = await startLocalKafka({ dataDir: broker.dataDir, port });
    expect({ pid: reused.pid, startedHere: reused.startedHere }).toEqual({ pid: broker.pid(), startedHere: false });
  });
});

describe("the launcher's watchdog over its single broker", () => {
  let dataDir: string;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('a broker JVM killed with SIGKILL is started again on its port and data, and what it stored is still read', async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-kafka-watchdog-'));
    const kafka = await startLocalKafka({ dataDir, port: await freePort(), tiedToThisProcess: true });
    const watched = keepLocalKafkaRunning(kafka, silent, 500);
    const client = createKafka({ brokers: kafka.brokers, clientId: 'fleet-tests', logger: silent });
    const topic = 'watchdog-test';
    try {
      const admin = client.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      await admin.disconnect();
      const producer = client.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ value: 'before the kill' }] });
      await producer.disconnect();

      kafka.signal('SIGKILL');
      await eventuallyDead(kafka.pid);
      const restarted = await eventually(() => (watched.current().pid !== kafka.pid ? watched.current() : undefined), 120_000, {
        what: 'the watchdog to start the broker again',
      });
      expect({ alive: isAlive(restarted.pid), brokers: restarted.brokers }).toEqual({ alive: true, brokers: kafka.brokers });

      const afterRestart = client.producer();
      await afterRestart.connect();
      await afterRestart.send({ topic, messages: [{ value: 'after the kill' }] });
      await afterRestart.disconnect();
      const consumer = client.consumer({ groupId: 'watchdog-test' });
      const values: string[] = [];
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void values.push(String(message.value)) });
      await eventually(() => values.length >= 2 || undefined, 60_000, { what: 'both messages read back' });
      await consumer.disconnect();
      expect(values).toEqual(['before the kill', 'after the kill']);
    } finally {
      await watched.stop();
    }
  }, 300_000);
});

describe('a replicated cluster of three nodes (KAFKA_BROKER_COUNT=3)', () => {
  let dataDir: string;
  let cluster: LocalKafkaCluster;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-kafka-cluster-'));
    // Six consecutive free ports below the ephemeral range: the three brokers, then their controllers.
    const base = await freePortRun(6);
    cluster = localKafkaCluster({ dataDir, port: base, tiedToThisProcess: true });
  });
  afterAll(async () => {
    await cluster?.down();
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  test('starts three nodes on consecutive ports, each with its pid file, that provision topics with three replicas and min.insync 2', async () => {
    await cluster.up();
    const ports = cluster.nodes.map((node) => node.brokerPort);
    expect(cluster.brokers).toEqual(ports.map((port) => `127.0.0.1:${port}`));
    expect(ports).toEqual([ports[0], ports[0]! + 1, ports[0]! + 2]);
    for (const node of cluster.nodes) expect(existsSync(path.join(dataDir, `broker-${node.nodeId}.pid`))).toBe(true);

    const admin = createKafka({ brokers: cluster.brokers, clientId: 'fleet-tests', logger: createLogger('tests', 'silent') }).admin();
    await admin.connect();
    try {
      expect(
        await eventually(
          async () => {
            const ids = (await admin.describeCluster()).brokers.map((broker) => broker.nodeId).sort();
            return ids.length === 3 ? ids : undefined;
          },
          30_000,
          { what: 'three registered brokers' },
        ),
      ).toEqual([1, 2, 3]);
      expect(
        await eventually(async () => ((await clusterReplicationFactor(admin)) === 3 ? 3 : undefined), 30_000, {
          what: 'three replicas to be had',
        }),
      ).toBe(3);
      // A node the controller fenced for a missed heartbeat refuses three replicas until it is back.
      await eventually(() => ensureTopics(admin, { prefix: 'cluster-test', replicationFactor: 3 }), 60_000, {
        what: 'the topics provisioned with three replicas',
      });
      const topic = topicsFor('cluster-test').tripLocations;
      // Each broker learns of a new topic from the metadata log a moment after the one that created it.
      const metadata = await eventually(() => admin.fetchTopicMetadata({ topics: [topic] }), 30_000, {
        what: 'every broker to know the topic',
      });
      expect(metadata.topics[0]!.partitions.every((partition) => partition.replicas.length === 3)).toBe(true);
      const described = await eventually(
        () =>
          admin.describeConfigs({
            includeSynonyms: false,
            resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }],
          }),
        30_000,
        { what: 'the topic config to be described' },
      );
      const [config] = described.resources;
      expect(config!.configEntries[0]!.configValue).toBe('2');
    } finally {
      await admin.disconnect();
    }
  }, 180_000);

  test('up() again starts only the node that is not running, on its data', async () => {
    const before = cluster.nodes.map((node) => node.pid());
    cluster.nodes[1]!.signal('SIGKILL');
    await eventuallyDead(before[1]!);
    await cluster.up();
    const after = cluster.nodes.map((node) => node.pid());
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[2]);
    expect(after[1]).not.toBe(before[1]);
  }, 180_000);

  test("the launcher's watchdog starts a killed node again by itself, and the node rejoins with its replicas", async () => {
    const watched = keepClusterRunning(cluster, silent, 500);
    const killed = cluster.nodes[2]!.pid()!;
    try {
      cluster.nodes[2]!.signal('SIGKILL');
      await eventuallyDead(killed);
      const restarted = await eventually(
        () => {
          const pid = cluster.nodes[2]!.pid();
          return pid !== undefined && pid !== killed && isAlive(pid) ? pid : undefined;
        },
        120_000,
        { what: 'the watchdog to start node 3 again' },
      );
      expect(restarted).not.toBe(killed);
      const admin = createKafka({ brokers: cluster.brokers, clientId: 'fleet-tests', logger: silent }).admin();
      await admin.connect();
      try {
        const topic = topicsFor('cluster-test').tripLocations;
        // The node kept its data: it catches up and is back in every partition's in-sync replicas.
        await eventually(
          async () => {
            const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
            return metadata.topics[0]!.partitions.every((partition) => partition.isr.includes(3)) || undefined;
          },
          60_000,
          { what: 'node 3 back in sync on every partition' },
        );
      } finally {
        await admin.disconnect();
      }
    } finally {
      await watched.stop();
    }
  }, 240_000);
});

async function eventuallyDead(pid: number): Promise<void> {
  await eventually(
    () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    10_000,
    { what: `process ${pid} to end` },
  );
}

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
import { clusterReplicationFactor, createKafka, createLogger, ensureTopics, topicsFor } from '@fleet/shared';
import { assertPortBindable, freePort, JAVA_TOOLS_HINT, startLocalKafka } from '../../deploy/local/src/apache-kafka';
import { localKafkaCluster, type LocalKafkaCluster } from '../../deploy/local/src/kafka-cluster';
import { eventually } from '../support/eventually';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';

const root = path.resolve(__dirname, '..', '..');

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

describe('a replicated cluster of three nodes (KAFKA_BROKER_COUNT=3)', () => {
  let dataDir: string;
  let cluster: LocalKafkaCluster;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-kafka-cluster-'));
    let base = 0;
    // Six consecutive free ports: the three brokers, then their controllers.
    for (let tries = 0; tries < 50 && base === 0; tries += 1) {
      const candidate = 20_000 + Math.floor(Math.random() * 30_000);
      const free = await Promise.all(
        Array.from({ length: 6 }, (_, offset) =>
          assertPortBindable(candidate + offset).then(
            () => true,
            () => false,
          ),
        ),
      );
      if (free.every(Boolean)) base = candidate;
    }
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

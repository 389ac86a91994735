// The replicated-cluster scenario's stack: a three-node Kafka of this machine (each node broker and
// controller, topics of three replicas with min.insync.replicas 2, as production runs it), and a
// gateway and a trip-writer copied from the launcher's with only their broker and ports changed, so
// that the same creates can be measured on it beside the single broker's 1 + 1.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKafka } from '@fleet/shared/kafka/client';
import { clusterReplicationFactor, ensureTopics } from '@fleet/shared/kafka/topics';
import { createLogger } from '@fleet/shared/logger';
import { freePortRange, localKafkaCluster } from '@fleet/local-stack/kafka-cluster';
import { environOf, startScaleOut, type ScaleOut } from './scale-out';

export interface Replicated {
  twins: ScaleOut;
  /** The three nodes' JVMs. */
  brokerPids(): number[];
  /** Stops the twins, then the nodes, and removes their data. */
  stop(): Promise<void>;
}

export interface ReplicatedOptions {
  gatewayPid: number;
  tripWriterPid: number;
  /** Two free ports: the twin gateway's and its trip-writer's metrics. */
  ports: [number, number];
  create: (gatewayUrl: string) => Promise<number>;
}

export async function startReplicated(options: ReplicatedOptions): Promise<Replicated> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-kafka-'));
  const cluster = localKafkaCluster({ dataDir, port: await freePortRange(), tiedToThisProcess: true });
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  let twins: ScaleOut | undefined;
  try {
    await cluster.up();
    // The twins run under the launcher's topic prefix, so their topics are provisioned under it here.
    const prefix = environOf(readFileSync(`/proc/${options.gatewayPid}/environ`, 'utf8')).KAFKA_TOPIC_PREFIX ?? 'fleet';
    const admin = createKafka({ brokers: cluster.brokers, clientId: 'fleet-bench', logger: createLogger('bench', 'silent') }).admin();
    await admin.connect();
    try {
      await ensureTopics(admin, { prefix, replicationFactor: await clusterReplicationFactor(admin) });
    } finally {
      await admin.disconnect();
    }
    twins = await startScaleOut({
      gatewayPid: options.gatewayPid,
      tripWriterPid: options.tripWriterPid,
      gatewayUrls: [],
      ports: options.ports,
      create: options.create,
      env: { KAFKA_BROKERS: cluster.brokers.join(',') },
    });
  } catch (error) {
    await cluster.down();
    removeData();
    throw error;
  }
  const started = twins;
  return {
    twins: started,
    brokerPids: () => cluster.nodes.map((node) => node.pid()).filter((pid): pid is number => pid !== undefined),
    async stop() {
      // The trip-writer leaves its group while the nodes still run.
      await started.stop();
      await cluster.down();
      removeData();
    },
  };
}

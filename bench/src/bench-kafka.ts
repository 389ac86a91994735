// A Kafka of the bench's own, one node or three, in a data directory that goes with it, its MBeans open
// on loopback so that the scenarios can count the requests it handles by API. Its nodes end with the
// bench however the bench ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalKafka } from '@fleet/local-stack/apache-kafka';
import { CLUSTER_NODES, freePortRange, localKafkaCluster } from '@fleet/local-stack/kafka-cluster';
import { clusterRequestCounts, type RequestCounts } from './kafka-tools';

export interface BenchKafka {
  nodes: 1 | 3;
  /** The bootstrap list, comma-separated. */
  brokers: string;
  /** The nodes' JVMs. */
  pids(): number[];
  /** The requests the nodes have handled since they started, by API, summed; null when one did not answer. */
  requestCounts(): RequestCounts | null;
  /** Stops the nodes and removes their data. */
  stop(): Promise<void>;
}

export async function startBenchKafka(nodes: 1 | 3): Promise<BenchKafka> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-kafka-'));
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    if (nodes === 1) {
      // Broker, controller and MBeans on three consecutive ports.
      const port = await freePortRange(3);
      const kafka = await startLocalKafka({ dataDir, port, jmxPort: port + 2, tiedToThisProcess: true });
      return {
        nodes,
        brokers: kafka.brokers.join(','),
        pids: () => [kafka.pid],
        requestCounts: () => clusterRequestCounts([port + 2]),
        async stop() {
          await kafka.stop();
          removeData();
        },
      };
    }
    // The nodes' broker ports, their controllers', then their MBeans'.
    const port = await freePortRange(3 * CLUSTER_NODES);
    const jmxPort = port + 2 * CLUSTER_NODES;
    const cluster = localKafkaCluster({ dataDir, port, jmxPort, tiedToThisProcess: true });
    try {
      await cluster.up();
    } catch (error) {
      await cluster.down();
      throw error;
    }
    return {
      nodes,
      brokers: cluster.brokers.join(','),
      pids: () => cluster.nodes.map((node) => node.pid()).filter((pid): pid is number => pid !== undefined),
      requestCounts: () => clusterRequestCounts(cluster.nodes.map((node) => jmxPort + node.nodeId - 1)),
      async stop() {
        await cluster.down();
        removeData();
      },
    };
  } catch (error) {
    removeData();
    throw error;
  }
}

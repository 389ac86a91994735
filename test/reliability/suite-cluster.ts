// A three-node Kafka cluster of a suite's own, in a directory of its own, with an admin client: the
// replicated fault tests' broker, torn down with the suite.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKafka, producerConfig } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import type { Admin } from 'kafkajs';
import { freePortRange, localKafkaCluster, type LocalKafkaCluster } from '../../deploy/local/src/kafka-cluster';

export interface SuiteCluster {
  dataDir: string;
  cluster: LocalKafkaCluster;
  admin: Admin;
}

/** Starts the cluster in a new directory named after `label` and connects an admin client to it. */
export async function startSuiteCluster(label: string): Promise<SuiteCluster> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `fleet-${label}-`));
  const cluster = localKafkaCluster({ dataDir, port: await freePortRange(), tiedToThisProcess: true });
  await cluster.up();
  const admin = createKafka({ brokers: cluster.brokers, clientId: 'fleet-tests', logger: createLogger('tests', 'silent') }).admin();
  await admin.connect();
  return { dataDir, cluster, admin };
}

/** Disconnects, stops the nodes and removes their data: as much of it as `startSuiteCluster` got to. */
export async function stopSuiteCluster({ dataDir, cluster, admin }: Partial<SuiteCluster>): Promise<void> {
  await admin?.disconnect();
  await cluster?.down();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

/** The records a topic holds: the sum of its partitions' end offsets, as their leaders answer. */
export async function recordsIn(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
}

export interface ConnectAndSend {
  /** From `since` to the send that went through; infinite if none did before `giveUpMs`. */
  ms: number;
  /** The message of each attempt that failed, in order. */
  failures: string[];
}

/**
 * A new idempotent producer connects and sends one record keyed `key`, and is made again after a failure,
 * as RenewingProducer makes a writer's: until a send goes through or `giveUpMs` from `since` has passed.
 */
export async function connectAndSend(
  brokers: string[],
  topic: string,
  key: string,
  { since, giveUpMs }: { since: number; giveUpMs: number },
): Promise<ConnectAndSend> {
  const failures: string[] = [];
  while (Date.now() - since < giveUpMs) {
    const producer = createKafka({ brokers, clientId: 'fleet-tests', logger: createLogger('tests', 'silent') }).producer(
      producerConfig(false),
    );
    try {
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: [{ key, value: 'sent while a node is frozen' }] });
      return { ms: Date.now() - since, failures };
    } catch (error) {
      failures.push((error as Error).message);
      await sleep(100);
    } finally {
      await producer.disconnect();
    }
  }
  return { ms: Number.POSITIVE_INFINITY, failures };
}

/** What a node's log says of the quorum and the fencing: the cluster's side of a fault's timeline. */
const CLUSTER_MOVES =
  /Fencing broker \d+|handleBrokerFenced|handleBrokerUnfenced|Completed transition to (Leader|CandidateState|Resigned)|Renouncing the leadership/;

export interface ClusterMove {
  /** Milliseconds after the time asked from. */
  at: number;
  /** The node whose log says it, e.g. "node-2". */
  node: string;
  /** The log line's message, cut short. */
  text: string;
}

/**
 * Each node's elections, leaderships won and fencings from `from` on, in time order: when the cluster
 * itself moved during a fault, beside when the clients did.
 */
export function clusterMovesSince(dataDir: string, from: number): ClusterMove[] {
  const moves: ClusterMove[] = [];
  for (const node of readdirSync(dataDir).filter((name) => name.startsWith('node-'))) {
    const file = path.join(dataDir, node, 'broker.log');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const stamp = /^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\]/.exec(line);
      if (!stamp || !CLUSTER_MOVES.test(line)) continue;
      const at = new Date(`${stamp[1]}T${stamp[2]}.${stamp[3]}`).getTime() - from;
      if (at >= 0) moves.push({ at, node, text: line.slice(line.indexOf(']', stamp[0].length) + 2).slice(0, 110) });
    }
  }
  return moves.sort((a, b) => a.at - b.at);
}

/** When the cluster first fenced `nodeId` from `from` on, in milliseconds after it; undefined if it did not. */
export function fencedAfterMs(dataDir: string, nodeId: number, from: number): number | undefined {
  return clusterMovesSince(dataDir, from).find((move) => move.text.startsWith(`Fencing broker ${nodeId} `))?.at;
}

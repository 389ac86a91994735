// The project's Kafka topics: their names (derived from one prefix, so several stacks or test runs can
// share a cluster), partition counts and settings, and the one code path that creates them. `npm start`,
// the tests, compose's init job and the Kubernetes Job all provision through `ensureTopics`; clients never
// create topics by accident.
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigResourceTypes, type Admin, type ITopicConfig } from 'kafkajs';

export interface Topics {
  tripLocations: string;
  vehicleGroups: string;
  replies: string;
  deadLetter: string;
  positions: string;
}

export interface TopicSpec {
  name: keyof Topics;
  partitions: number;
  retentionMs: number;
  /** Why the figures are what they are; shown by the provisioning CLI. */
  why: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Partitions are the unit of writer parallelism: within a consumer group each partition is consumed by one
 * writer at a time, so a topic's partition count is the most writers that do useful work. Kafka can add
 * partitions but never remove them, and adding some moves keys to other partitions, so start with room.
 */
const TRIP_PARTITIONS = 12;

export const topicSpecs: readonly TopicSpec[] = [
  {
    name: 'tripLocations',
    partitions: TRIP_PARTITIONS,
    retentionMs: 7 * DAY_MS,
    why: "the write path's volume; 12 = most trip-writers that do work",
  },
  { name: 'vehicleGroups', partitions: 3, retentionMs: 7 * DAY_MS, why: 'low volume; 3 keeps one group-writer per partition possible' },
  // Each gateway and Teltonika listener reads its own share of these partitions: twice as many as they
  // may number during a rollout at their autoscalers' maximum (10 + 1 and 4 + 1; a test checks it), so
  // that a new member always gets partitions. More gateways want more partitions: create-topics grows it.
  { name: 'replies', partitions: 32, retentionMs: 60 * 60 * 1000, why: "a reply is useless after the gateway's REPLY_TIMEOUT_MS" },
  { name: 'deadLetter', partitions: 3, retentionMs: 14 * DAY_MS, why: 'kept two weeks for operators to inspect and replay' },
  // Every gateway with a live stream reads all of it; a stream that reconnects replays from PostgreSQL.
  // The event processor reads it too, so it is kept for a day: a processor down for less misses nothing.
  // As many partitions as the trip topic, so that each carries one trip partition's rows, committed in
  // id order: a stream's cursor is the last id sent per partition (gateway's stream-cursor.ts).
  {
    name: 'positions',
    partitions: TRIP_PARTITIONS,
    retentionMs: DAY_MS,
    why: 'committed positions for live streams and the event processor, which catches up after a day down',
  },
];

const suffixes: Record<keyof Topics, string> = {
  tripLocations: 'trip-locations',
  vehicleGroups: 'vehicle-groups',
  replies: 'replies',
  deadLetter: 'dead-letter',
  positions: 'positions',
};

export function topicsFor(prefix: string): Topics {
  return {
    tripLocations: `${prefix}.${suffixes.tripLocations}`,
    vehicleGroups: `${prefix}.${suffixes.vehicleGroups}`,
    replies: `${prefix}.${suffixes.replies}`,
    deadLetter: `${prefix}.${suffixes.deadLetter}`,
    positions: `${prefix}.${suffixes.positions}`,
  };
}

export interface ProvisionedTopic {
  topic: string;
  partitions: number;
  created: boolean;
  grown: boolean;
}

export interface EnsureTopicsOptions {
  prefix: string;
  /** At most the number of brokers; production runs three. */
  replicationFactor: number;
}

/** Production's replication: three replicas, and a write acknowledged once two of them hold it. */
export const REPLICATED = { replicationFactor: 3, minInsyncReplicas: 2 } as const;

/** With three replicas a write acknowledged by all in-sync replicas survives one broker being down. */
export function minInsyncReplicas(replicationFactor: number): number {
  return replicationFactor >= REPLICATED.replicationFactor ? REPLICATED.minInsyncReplicas : 1;
}

/**
 * Creates the topics that are missing, grows any with fewer partitions than the table, and sets each
 * topic's retention and min.insync.replicas to the table's. Safe to run again and from several processes.
 */
export async function ensureTopics(admin: Admin, options: EnsureTopicsOptions): Promise<ProvisionedTopic[]> {
  const names = topicsFor(options.prefix);
  const minInsync = minInsyncReplicas(options.replicationFactor);
  const configOf = (spec: TopicSpec): ITopicConfig['configEntries'] => [
    { name: 'retention.ms', value: String(spec.retentionMs) },
    { name: 'min.insync.replicas', value: String(minInsync) },
  ];

  const existing = new Set(await admin.listTopics());
  const missing = topicSpecs.filter((spec) => !existing.has(names[spec.name]));
  if (missing.length > 0) {
    await admin.createTopics({
      // kafkajs's own wait gives up when the answering broker does not know the topic yet, which KRaft's
      // metadata propagation makes common; waitForLeaders waits that out below.
      waitForLeaders: false,
      topics: missing.map((spec) => ({
        topic: names[spec.name],
        numPartitions: spec.partitions,
        replicationFactor: options.replicationFactor,
        configEntries: configOf(spec),
      })),
    });
  }

  const partitionsOf = await waitForLeaders(
    admin,
    topicSpecs.map((spec) => names[spec.name]),
  );
  const toGrow = topicSpecs.filter((spec) => (partitionsOf.get(names[spec.name]) ?? 0) < spec.partitions);
  if (toGrow.length > 0) {
    await admin.createPartitions({ topicPartitions: toGrow.map((spec) => ({ topic: names[spec.name], count: spec.partitions })) });
  }
  await admin.alterConfigs({
    validateOnly: false,
    resources: topicSpecs.map((spec) => ({ type: ConfigResourceTypes.TOPIC, name: names[spec.name], configEntries: configOf(spec)! })),
  });

  return topicSpecs.map((spec) => ({
    topic: names[spec.name],
    partitions: Math.max(partitionsOf.get(names[spec.name]) ?? 0, spec.partitions),
    created: missing.includes(spec),
    grown: toGrow.includes(spec),
  }));
}

/** Three replicas where the cluster has three brokers or more, as production runs; else one per broker. */
export async function clusterReplicationFactor(admin: Admin): Promise<number> {
  const { brokers } = await admin.describeCluster();
  return Math.min(REPLICATED.replicationFactor, brokers.length);
}

const USABLE_WITHIN_MS = 30_000;

/**
 * The partition count of each topic once every partition has a leader. A topic just created may be
 * unknown to the broker that answers metadata for a moment, so that answer is waited out.
 */
export async function waitForLeaders(admin: Admin, topics: string[]): Promise<Map<string, number>> {
  const deadline = Date.now() + USABLE_WITHIN_MS;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      if (metadata.topics.every((topic) => topic.partitions.every((partition) => partition.leader >= 0))) {
        return new Map(metadata.topics.map((topic) => [topic.name, topic.partitions.length]));
      }
    } catch (error) {
      if ((error as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION' || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`topics without a leader after ${USABLE_WITHIN_MS / 1000} s: ${topics.join(', ')}`);
    await sleep(100);
  }
}

/** Message headers of the command protocol. */
export const headers = {
  correlationId: 'correlation-id',
  replyTopic: 'reply-topic',
  /** The partition of the reply topic the asking gateway reads; the reply goes there and nowhere else. */
  replyPartition: 'reply-partition',
  requestId: 'request-id',
  deadLetterReason: 'dead-letter-reason',
  deadLetterSource: 'dead-letter-source',
} as const;

// Which partition of a topic a key lands on, as the producer's own partitioner would place it. A batch
// from many devices is published as one message per partition rather than one per device, and each
// device's positions must still reach the partition a message keyed by its IMEI reaches: the gateway
// places trip-location commands so, and the trip-writer its announcements of committed positions. Both
// ask the same partitioner (kafkajs's default, Java's murmur2) with the partition counts the broker
// reports.
import { Partitioners, type ITopicMetadata, type PartitionMetadata } from 'kafkajs';

export class TopicLayout {
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly partitions = new Map<string, PartitionMetadata[]>();

  /** Takes the partitions of each topic from a metadata answer; a topic the answer lacks keeps its last. */
  update(topics: readonly ITopicMetadata[]): void {
    for (const { name, partitions } of topics) {
      if (partitions.length > 0)
        this.partitions.set(
          name,
          [...partitions].sort((a, b) => a.partitionId - b.partitionId),
        );
    }
  }

  /** How many brokers lead partitions of the topics known: more than one on a cluster. */
  leaders(): number {
    const leaders = new Set<number>();
    for (const partitions of this.partitions.values()) for (const { leader } of partitions) if (leader >= 0) leaders.add(leader);
    return leaders.size;
  }

  /** The broker leading a partition, as the last metadata said; undefined while not known or leaderless. */
  leaderOf(topic: string, partition: number): number | undefined {
    const leader = this.partitions.get(topic)?.[partition]?.leader;
    return leader === undefined || leader < 0 ? undefined : leader;
  }

  /** The partition `key` lands on, or undefined while the topic's layout is not known yet. */
  partitionOf(topic: string, key: string): number | undefined {
    const partitionMetadata = this.partitions.get(topic);
    if (partitionMetadata === undefined) return undefined;
    return this.partitioner({ topic, partitionMetadata, message: { key, value: null } });
  }
}

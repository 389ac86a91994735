// The consumer group's lag per partition, read from the broker's offsets at each scrape: the figure KEDA's
// Kafka trigger scales the writers on, computed the way it computes it (the partition's end offset minus
// the group's committed offset; with nothing committed, everything retained counts, as with KEDA's
// offsetResetPolicy "earliest"). Every writer of a group reports the whole group's lag, so a dashboard
// takes max by (partition), not the sum.
import type { Admin } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';
import type { AdminClient } from './admin-client';

export interface ConsumerLagSource {
  admin: Admin;
  groupId: string;
  topic: string;
}

export interface PartitionLag {
  partition: number;
  lag: number;
}

/** Lag of each partition of the topic for the group. */
export async function readConsumerLag({ admin, groupId, topic }: ConsumerLagSource): Promise<PartitionLag[]> {
  const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
  const committedOf = new Map((committed[0]?.partitions ?? []).map((entry) => [entry.partition, Number(entry.offset)]));
  return ends.map((end) => {
    const done = committedOf.get(end.partition) ?? -1;
    // -1 is Kafka's "no committed offset": the group would start from the earliest retained record.
    const from = done >= 0 ? done : Number(end.low);
    return { partition: end.partition, lag: Math.max(0, Number(end.high) - from) };
  });
}

/** The lag as a gauge, read at each scrape through the service's own admin client. */
export function registerConsumerLag(registry: Registry, client: AdminClient, group: Omit<ConsumerLagSource, 'admin'>): void {
  new Gauge({
    name: 'fleet_consumer_group_lag',
    help: 'Messages written to a partition and not yet committed by the consumer group (what KEDA scales the writers on)',
    labelNames: ['group', 'topic', 'partition'],
    registers: [registry],
    async collect() {
      // A broker that does not answer (or a client closed by a stop) leaves the figures out of this scrape
      // rather than failing it.
      const partitions = await client
        .ask(async (admin) => {
          await admin.connect();
          return readConsumerLag({ admin, ...group });
        })
        .catch(() => undefined);
      this.reset();
      for (const { partition, lag: value } of partitions ?? []) {
        this.set({ group: group.groupId, topic: group.topic, partition: String(partition) }, value);
      }
    },
  });
}

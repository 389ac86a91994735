import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { TopicLayout } from './topic-layout';

function partitionsOf(count: number): PartitionMetadata[] {
  return Array.from({ length: count }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    offlineReplicas: [],
    partitionErrorCode: 0,
  }));
}

describe('TopicLayout', () => {
  test('knows no partition before the broker has described the topic', () => {
    expect(new TopicLayout().partitionOf('fleet.trip-locations', '356938035643809')).toBeUndefined();
  });

  test('places each key where the producer places a keyed message, over every partition of the topic', () => {
    const layout = new TopicLayout();
    layout.update([{ name: 'fleet.trip-locations', partitions: partitionsOf(12) }]);
    const producer = Partitioners.DefaultPartitioner();
    const placed = new Set<number>();
    for (let device = 0; device < 200; device += 1) {
      const key = String(356938035643000 + device);
      const expected = producer({ topic: 'fleet.trip-locations', partitionMetadata: partitionsOf(12), message: { key, value: null } });
      expect({ key, partition: layout.partitionOf('fleet.trip-locations', key) }).toEqual({ key, partition: expected });
      placed.add(expected);
    }
    expect(placed.size).toBe(12);
  });

  test('follows the topic when it grows, and keeps the last layout when an answer lacks the topic', () => {
    const layout = new TopicLayout();
    layout.update([{ name: 't', partitions: partitionsOf(1) }]);
    expect(layout.partitionOf('t', 'a')).toBe(0);
    layout.update([{ name: 't', partitions: partitionsOf(24) }]);
    const grown = Array.from({ length: 100 }, (_, i) => layout.partitionOf('t', `device-${i}`)!);
    expect(Math.max(...grown)).toBeGreaterThan(11);
    layout.update([{ name: 't', partitions: [] }]);
    expect(layout.partitionOf('t', 'device-0')).toBe(grown[0]);
  });

  test("knows each partition's leader, none for a leaderless one, and how many brokers lead", () => {
    const layout = new TopicLayout();
    const partitions = partitionsOf(3).map((partition, index) => ({ ...partition, leader: [1, 2, -1][index]! }));
    layout.update([{ name: 't', partitions }]);
    expect([0, 1, 2, 3].map((partition) => layout.leaderOf('t', partition))).toEqual([1, 2, undefined, undefined]);
    expect(layout.leaderOf('unknown', 0)).toBeUndefined();
    expect(layout.leaders()).toBe(2);
  });
});

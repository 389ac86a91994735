import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { TopicLayout } from '@fleet/shared/kafka/topic-layout';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import { positionAnnouncements } from './consume';

const TOPIC = 'fleet.positions';

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

function layoutOf(count: number): (imei: string) => number | undefined {
  const layout = new TopicLayout();
  layout.update([{ name: TOPIC, partitions: partitionsOf(count) }]);
  return (imei) => layout.partitionOf(TOPIC, imei);
}

/** Where kafkajs's producer puts a message keyed by `imei`, as it did when each device had messages of its own. */
function keyedPartition(imei: string, count: number): number {
  return Partitioners.DefaultPartitioner()({ topic: TOPIC, partitionMetadata: partitionsOf(count), message: { key: imei, value: null } });
}

function event(id: number, imei: string, attributes: PositionEvent['attributes'] = null): PositionEvent {
  return {
    id,
    imei,
    gpsTime: '2026-11-27T04:00:00.000Z',
    latitude: -6.2,
    longitude: 106.8,
    speed: 40,
    ignition: true,
    angle: null,
    satellite: 9,
    door1: null,
    door2: null,
    temp: null,
    fuel_percentage: null,
    attributes,
    receivedAt: '2026-11-27T04:00:01.000Z',
  };
}

/** Each announcement's partition and events, as a consumer reads them. */
function read(announcements: ReturnType<typeof positionAnnouncements>) {
  return announcements.map(({ topic, message }) => ({
    topic,
    partition: message.partition,
    key: message.key,
    events: JSON.parse(String(message.value)) as PositionEvent[],
  }));
}

describe('positionAnnouncements', () => {
  test('a batch from 100 devices becomes one message per partition, each device in the partition its IMEI is keyed to, in id order', () => {
    const devices = Array.from({ length: 100 }, (_, i) => `35693803564${String(i).padStart(4, '0')}`);
    // Two positions a device, ids interleaved across devices and handed over out of order.
    const events = devices.flatMap((imei, i) => [event(1000 + i, imei), event(2000 + i, imei)]).reverse();

    const messages = read(positionAnnouncements(TOPIC, events, layoutOf(12)));

    const partitions = new Set(devices.map((imei) => keyedPartition(imei, 12)));
    expect(messages).toHaveLength(partitions.size);
    expect(new Set(messages.map((message) => message.partition))).toEqual(partitions);
    for (const message of messages) {
      expect(message.topic).toBe(TOPIC);
      expect(message.key).toBeNull();
      expect(message.events.every((announced) => keyedPartition(announced.imei, 12) === message.partition)).toBe(true);
      const ids = message.events.map((announced) => announced.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    expect(messages.flatMap((message) => message.events).sort((a, b) => a.id - b.id)).toEqual([...events].sort((a, b) => a.id - b.id));
  });

  test("while the topic's partitions are not known, each device's positions are a message keyed by its IMEI", () => {
    const events = [event(3, 'b'), event(1, 'a'), event(2, 'b')];

    const messages = read(positionAnnouncements(TOPIC, events, () => undefined));

    expect(messages).toEqual([
      { topic: TOPIC, partition: undefined, key: 'a', events: [event(1, 'a')] },
      { topic: TOPIC, partition: undefined, key: 'b', events: [event(2, 'b'), event(3, 'b')] },
    ]);
  });

  test('positions too many for one message are split into messages under the 1 MB limit, in id order', () => {
    // 256 attributes of 64 characters each: a position of about 17 KB, 3,000 of them about 50 MB.
    const attributes = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`io${i}`, 'ž'.repeat(64)]));
    const events = Array.from({ length: 3000 }, (_, i) => event(i + 1, 'one-device', attributes));

    const announcements = positionAnnouncements(TOPIC, events, layoutOf(12));

    expect(announcements.length).toBeGreaterThan(1);
    for (const { message } of announcements) expect(Buffer.byteLength(String(message.value))).toBeLessThan(1_000_000);
    const messages = read(announcements);
    expect(new Set(messages.map((message) => message.partition))).toEqual(new Set([keyedPartition('one-device', 12)]));
    expect(messages.flatMap((message) => message.events)).toEqual(events);
  });
});

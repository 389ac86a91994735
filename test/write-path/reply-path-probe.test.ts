// A gateway proves each reply partition it is given by sending a probe to it and reading it back before
// any request names the partition; probes that do not come back are sent again round after round. A
// gateway's stop ends the probing at once, rather than leaving a round's wait (and, for a partition still
// wanted, further rounds) running behind it.
import { producerConfig } from '@fleet/shared/kafka/client';
import { headers } from '@fleet/shared/kafka/topics';
import { ReplyPathProbe } from '@fleet/write-path/kafka/reply-path-probe';
import { eventually } from '../support/eventually';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic, messagesIn, readTopic, testKafka } from '../support/kafka';

afterAll(() => closeKafka());

async function probing(partitions: number) {
  const topic = `${uniquePrefix('probe')}.replies`;
  await createTopic(topic, partitions);
  const producer = testKafka().producer(producerConfig(testServers().clientEnv.KAFKA_AUTO_CREATE_TOPICS === 'true'));
  await producer.connect();
  const probe = new ReplyPathProbe({ producer: () => producer, topic });
  return { topic, probe, close: () => producer.disconnect() };
}

test('each partition is confirmed when its own probe is read back', async () => {
  const { topic, probe, close } = await probing(2);
  try {
    const confirmed: number[] = [];
    const confirming = probe.confirm([0, 1], { confirmed: (partition) => confirmed.push(partition), wanted: () => true });
    const sent = await readTopic(topic, 2);
    const onPartition1 = sent.find(({ partition }) => partition === 1)!;
    probe.arrived(onPartition1.headers[headers.correlationId]!);
    expect(confirmed).toEqual([1]);
    const onPartition0 = sent.find(({ partition }) => partition === 0)!;
    probe.arrived(onPartition0.headers[headers.correlationId]!);
    await confirming;
    expect(confirmed).toEqual([1, 0]);
  } finally {
    await close();
  }
});

test('stopping ends probing that would otherwise go on round after round', async () => {
  const { topic, probe, close } = await probing(1);
  try {
    const confirmed: number[] = [];
    // Nothing reads the probes back, and the partition stays wanted: only the stop can end it.
    const confirming = probe.confirm([0], { confirmed: (partition) => confirmed.push(partition), wanted: () => true });
    await eventually(async () => (await messagesIn(topic)) === 1, 15_000, { what: 'the first probe to be sent' });
    probe.stop();
    await confirming;
    expect(confirmed).toEqual([]);
    expect(await messagesIn(topic)).toBe(1);
  } finally {
    await close();
  }
});

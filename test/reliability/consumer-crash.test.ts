// A Kafka consumer that kafkajs gives up on (a non-retriable crash, after which kafkajs leaves it
// disconnected for good) is replaced by the supervisor that every writer and gateway consumer runs
// under. The crash is real: the group's assignment step fails once while the consumer joins, as the mock
// cluster's SyncGroup sometimes does when several writers join at once.
import { PartitionAssigners, type PartitionAssigner } from 'kafkajs';
import { createKafka, createLogger } from '@fleet/shared';
import { superviseConsumer } from '../../shared/src/kafka/supervised-consumer';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, produceRaw } from '../support/kafka';

afterAll(async () => {
  await closeKafka();
});

/** The round-robin assigner, failing its first assignment. */
function failingOnce(): { assigner: PartitionAssigner; failures: () => number } {
  let failures = 0;
  const assigner: PartitionAssigner = (config) => {
    const inner = PartitionAssigners.roundRobin(config);
    return {
      ...inner,
      async assign(group) {
        if (failures === 0) {
          failures += 1;
          throw new Error('the assignment failed');
        }
        return inner.assign(group);
      },
    };
  };
  return { assigner, failures: () => failures };
}

test('a consumer that crashes for good while joining is replaced, and the replacement consumes the topic', async () => {
  const lines: Array<{ msg: string }> = [];
  const logger = createLogger('consumer-crash', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const kafka = createKafka({ brokers: testServers().kafkaBrokers.split(','), clientId: 'fleet-tests-crash', logger });
  const topic = `${uniquePrefix('consumer-crash')}.commands`;
  await produceRaw(topic, [{ value: 'one' }, { value: 'two' }, { value: 'three' }]);

  const { assigner, failures } = failingOnce();
  const received: string[] = [];
  let created = 0;
  const supervised = await superviseConsumer({
    name: `${topic}.group`,
    logger,
    create: () => {
      created += 1;
      return kafka.consumer({ groupId: `${topic}.group`, partitionAssigners: [assigner], sessionTimeout: 6000, heartbeatInterval: 2000, maxWaitTimeInMs: 5 });
    },
    run: async (consumer) => {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void received.push(String(message.value)) });
    },
  });
  try {
    const deadline = Date.now() + 30_000;
    while (received.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

    expect(failures()).toBe(1);
    expect(created).toBe(2);
    expect(received.sort()).toEqual(['one', 'three', 'two']);
    const messages = lines.map((line) => line.msg);
    expect(messages).toContain('the Kafka consumer crashed and kafkajs will not restart it; starting a new one');
    expect(messages).toContain('the Kafka consumer runs again');
  } finally {
    await supervised.stop();
  }
}, 60_000);

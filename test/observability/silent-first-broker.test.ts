// kafkajs seeds every new client from the first broker of its list. When that node is frozen (alive to
// TCP, answering nothing), the seed's API versions request times out; kafkajs then tried the same seed
// again, found its socket open, took it for connected without knowing its API versions, and failed with
// "Broker not connected". A writer replacing its producer after a frozen node (RenewingProducer) could
// not, for as long as the node stayed frozen and first in KAFKA_BROKERS. patches/kafkajs+2.2.4.patch
// (change 8) moves to the next broker of the list instead, as it does for a refused connection.
import { createKafka, producerConfig } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import type { Producer } from 'kafkajs';
import { closeKafka, createTopic, readTopic } from '../support/kafka';
import { testServers } from '../support/harness';
import { startSilentServer, type SilentServer } from '../support/silent-server';

let silent: SilentServer;

beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(async () => {
  await silent?.close();
  await closeKafka();
});

test('an idempotent producer whose first broker answers nothing connects through the next one and sends', async () => {
  const topic = `fleet-tests.silent-first-broker.${Date.now()}`;
  await createTopic(topic);
  const kafka = createKafka({
    brokers: [silent.address, ...testServers().kafkaBrokers.split(',')],
    clientId: 'fleet-tests',
    logger: createLogger('tests', 'silent'),
  });
  const producer: Producer = kafka.producer(producerConfig(false));
  try {
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key: 'device-1', value: 'sent past a silent broker' }] });
  } finally {
    await producer.disconnect();
  }
  const read = await readTopic(topic, 1);
  expect(read.map(({ key, value }) => ({ key, value }))).toEqual([{ key: 'device-1', value: 'sent past a silent broker' }]);
});

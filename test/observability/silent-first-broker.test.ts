// kafkajs seeds every new client from the first broker of its list. When that node is frozen (alive to
// TCP, answering nothing), the seed's API versions request times out; kafkajs then tried the same seed
// again, found its socket open, took it for connected without knowing its API versions, and failed with
// "Broker not connected". A writer replacing its producer after a frozen node (RenewingProducer) could
// not, for as long as the node stayed frozen and first in KAFKA_BROKERS. patches/kafkajs+2.2.4.patch
// (change 8) moves to the next broker of the list instead, as it does for a refused connection.
import net from 'node:net';
import { createKafka, producerConfig } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import type { Producer } from 'kafkajs';
import { closeKafka, createTopic, readTopic } from '../support/kafka';
import { testServers } from '../support/harness';

let silent: net.Server;
let silentAddress: string;

beforeAll(async () => {
  silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentAddress = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  silent.close();
  await closeKafka();
});

test('an idempotent producer whose first broker answers nothing connects through the next one and sends', async () => {
  const topic = `fleet-tests.silent-first-broker.${Date.now()}`;
  await createTopic(topic);
  const kafka = createKafka({
    brokers: [silentAddress, ...testServers().kafkaBrokers.split(',')],
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

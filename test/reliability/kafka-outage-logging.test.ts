// While Kafka is down, the clients of a process fail many times a second. The gateway logs the outage
// once when it starts and once when it is over, not once per failure, and counts it on /metrics. The
// broker is an Apache Kafka of this file's own, killed and started again on its data.
import { closeDb, provisionedPrefix, baseEnv } from '../support/harness';
import { provisionTopics } from '../support/kafka';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { scrape } from '../support/scrape';
import { waitUntil } from './fault-support';

let broker: PrivateKafka;
let gateway: ServiceProcess;

beforeAll(async () => {
  broker = await startPrivateKafka();
  const prefix = await provisionedPrefix('outage-logging');
  await provisionTopics(prefix, broker.brokers);
  gateway = await spawnService('gateway', baseEnv(prefix, { KAFKA_BROKERS: broker.brokers.join(','), LOG_LEVEL: 'info' }));
}, 150_000);
afterAll(async () => {
  await stopAllServices();
  await broker?.stop();
  await closeDb();
});

test('a broker down for several seconds: one error line when the outage starts, one line when it is over, and a count', async () => {
  const metric = async (name: string) => (await scrape(`${gateway.url}/metrics`)).value(name);
  // A fresh broker's group coordinator can refuse the first requests for a moment; that is over first.
  await waitUntil(async () => (await metric('fleet_kafka_client_outage_active')) === 0, 'no outage in progress', 30_000, 200);
  const outagesBefore = await metric('fleet_kafka_client_outages_total');
  const linesBefore = gateway.logs.length;

  broker.kill();
  const killedAt = Date.now();
  // Long enough for every client of the gateway to fail again and again.
  await waitUntil(() => Date.now() - killedAt > 8000, 'eight seconds of outage', 20_000, 500);
  await broker.restart();
  const during = () => gateway.logs.slice(linesBefore);
  await waitUntil(
    () => during().some((line) => line.msg === 'kafka: the client errors have stopped; the outage is over'),
    'the end of the outage',
    60_000,
    200,
  );

  const kafkaErrors = during().filter((line) => line.level >= 50 && line.msg.startsWith('kafka:'));
  const clientFailures = during().filter((line) => line.level === 20 && line.msg.startsWith('kafka:'));
  process.stdout.write(
    `fault-figures ${JSON.stringify({ fault: 'broker killed for 8 s: kafka client log lines', errorLines: kafkaErrors.length })}\n`,
  );
  expect(kafkaErrors).toHaveLength(1);
  expect(kafkaErrors[0]!.msg).toMatch(/an outage starts/);
  expect((await metric('fleet_kafka_client_outages_total')) - outagesBefore).toBe(1);
  expect(await metric('fleet_kafka_client_outage_active')).toBe(0);
  expect(clientFailures.length).toBe(0); // at LOG_LEVEL info the repeated failures are not written at all
}, 120_000);

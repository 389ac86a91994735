// A clean first start on a fresh broker logs no error, though its group coordinator is still loading.
// While Kafka is down, the clients of a process fail many times a second. The gateway logs the outage
// once when it starts and once when it is over, not once per failure, and counts it on /metrics; the 503s
// it answers meanwhile are logged as a run, not a line each. The broker is an Apache Kafka of this file's
// own, killed and started again on its data.
import { buildTrip, closeDb, provisionedPrefix, baseEnv, postJson, signToken } from '../support/harness';
import { provisionTopics } from '../support/kafka';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { scrape } from '../support/scrape';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { eventually } from '../support/eventually';

let broker: PrivateKafka;
let gateway: ServiceProcess;
let writer: ServiceProcess;

beforeAll(async () => {
  broker = await startPrivateKafka();
  const prefix = await provisionedPrefix('outage-logging');
  await provisionTopics(prefix, broker.brokers);
  const env = baseEnv(prefix, { KAFKA_BROKERS: broker.brokers.join(','), LOG_LEVEL: 'info' });
  // The gateway logs at debug, so that the client failures during an outage are seen to happen, at debug.
  [gateway, writer] = await Promise.all([spawnService('gateway', { ...env, LOG_LEVEL: 'debug' }), spawnService('trip-writer', env)]);
}, 150_000);
afterAll(async () => {
  await stopAllServices();
  await broker?.stop();
  await closeDb();
});

test('a clean first start on a fresh broker logs no error line, in the gateway or the writer', async () => {
  const token = await signToken();
  await eventually(
    async () => (await postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, buildTrip(), { authorization: `Bearer ${token}` })).status === 200,
    60_000,
    { what: 'a first trip create answered 200', intervalMs: 200 },
  );
  expect([...gateway.logs, ...writer.logs].filter((line) => line.level >= 50)).toEqual([]);
}, 90_000);

test('a broker down for several seconds: one error line when the outage starts, one line when it is over, and a count', async () => {
  const metric = async (name: string) => (await scrape(`${gateway.url}/metrics`)).value(name);
  // A fresh broker's group coordinator can refuse the first requests for a moment; that is over first.
  await eventually(async () => (await metric('fleet_kafka_client_outage_active')) === 0, 30_000, {
    what: 'no outage in progress',
    intervalMs: 200,
  });
  const outagesBefore = await metric('fleet_kafka_client_outages_total');
  const linesBefore = gateway.logs.length;

  broker.kill();
  const killedAt = Date.now();
  // Long enough for every client of the gateway to fail again and again, with writes answered 503 meanwhile.
  const token = await signToken();
  let unavailable = 0;
  await eventually(
    async () => {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, buildTrip(), { authorization: `Bearer ${token}` }),
        ),
      );
      unavailable += answers.filter((answer) => answer.status === 503).length;
      return Date.now() - killedAt > 8000;
    },
    60_000,
    { what: 'eight seconds of outage', intervalMs: 500 },
  );
  await broker.restart();
  const during = () => gateway.logs.slice(linesBefore);
  await eventually(() => during().some((line) => line.msg === 'kafka: the client errors have stopped; the outage is over'), 60_000, {
    what: 'the end of the outage',
    intervalMs: 200,
  });

  const kafkaErrors = during().filter((line) => line.level >= 50 && line.msg.startsWith('kafka:'));
  const clientFailures = during().filter((line) => line.level === 20 && line.msg.startsWith('kafka:'));
  process.stdout.write(
    `fault-figures ${JSON.stringify({ fault: 'broker killed for 8 s: kafka client log lines', errorLines: kafkaErrors.length, debugLines: clientFailures.length })}\n`,
  );
  expect(kafkaErrors).toHaveLength(1);
  expect(kafkaErrors[0]!.msg).toMatch(/an outage starts/);
  expect((await metric('fleet_kafka_client_outages_total')) - outagesBefore).toBe(1);
  expect(await metric('fleet_kafka_client_outage_active')).toBe(0);
  // The client failed again and again meanwhile: every failure after the first went to debug.
  expect(clientFailures.length).toBeGreaterThan(1);

  // Many 503s, each code's run logged once when it starts, counted while it lasts, closed when it stops.
  expect(unavailable).toBeGreaterThanOrEqual(50);
  const runStarts = during().filter((line) => line.level === 40 && /\(answering 503 E-S1\/1-0\d; counted until it stops\)$/.test(line.msg));
  const perRequest = during().filter((line) => line.level === 40 && line.msg.endsWith('retry later'));
  expect(perRequest).toEqual([]);
  expect(runStarts.length).toBeGreaterThanOrEqual(1);
  expect(new Set(runStarts.map((line) => line.code)).size).toBe(runStarts.length);
  await eventually(
    () => during().filter((line) => line.msg.endsWith('no longer answered; the run of them is over')).length === runStarts.length,
    30_000,
    { what: 'every run of 503s to be closed', intervalMs: 200 },
  );
}, 120_000);

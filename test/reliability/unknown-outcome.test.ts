// A produce that fails or times out may still have reached the broker, and the writer may store the
// command once the broker answers again. So a 503 for such a write says the outcome is unknown and that a
// retry is safe; only a write refused before anything was published, the broker having failed the
// gateway's check, says the broker is unavailable.
// The broker is an Apache Kafka of this file's own, frozen with SIGSTOP.
import { eventually } from '../support/eventually';
import { baseEnv, buildTrip, closeDb, postJson, provisionedPrefix, signToken } from '../support/harness';
import { provisionTopics } from '../support/kafka';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';

const TRIP = TRIP_LOCATION_PATH;
let broker: PrivateKafka;
let gateway: ServiceProcess;

beforeAll(async () => {
  broker = await startPrivateKafka();
  const prefix = await provisionedPrefix('unknown-outcome');
  await provisionTopics(prefix, broker.brokers);
  gateway = await spawnService('gateway', baseEnv(prefix, { KAFKA_BROKERS: broker.brokers.join(','), PUBLISH_TIMEOUT_MS: '1000' }));
}, 150_000);
afterAll(async () => {
  broker?.resume();
  await stopAllServices();
  await broker?.stop();
  await closeDb();
});

test('a write whose produce times out answers 503 saying it was not confirmed and a retry is safe; once the broker fails the check too, writes are refused up front as the broker unavailable', async () => {
  const auth = { authorization: `Bearer ${await signToken()}` };
  broker.pause();
  const timedOut = await postJson(`${gateway.url}${TRIP}`, buildTrip(), auth);
  expect(timedOut.status).toBe(503);
  expect(timedOut.headers.get('retry-after')).toBe('1');
  // A slow produce alone does not say Kafka is down: a busy broker answers late too.
  expect(timedOut.body).toEqual({
    code: 'E-S1/1-02',
    message: 'The write was not confirmed in time, retry later',
    detail:
      'Kafka did not confirm the write within 1000 ms, so it may or may not have been stored; a retry with the same body (and Idempotency-Key) is stored once',
  });

  // The check that follows finds the broker silent: the gateway publishes nothing until it answers again.
  await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 503, 10_000, { what: 'the gateway not ready' });
  const refused = await postJson(`${gateway.url}${TRIP}`, buildTrip(), auth);
  expect(refused.status).toBe(503);
  expect(refused.body).toEqual({ code: 'E-S1/1-01', message: 'The message broker is unavailable, retry later' });
}, 60_000);

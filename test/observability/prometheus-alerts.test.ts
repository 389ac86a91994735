// The operator's kit against the running stack: a real Prometheus (Debian's package, a server of this
// test's own) scrapes the gateway, both writers and the event processor as real processes, with the rules of
// deploy/observability/alerts.yml (their `for` shortened to seconds; promtool tests the real file in
// alert-rules.test.ts). Every expression of the dashboard and the rules must parse and name only metrics
// the services serve; a writer killed with SIGKILL must show up as FleetWriterDown firing in the API.
import { baseEnv, buildGroup, buildTrip, closeDb, postJson, provisionedPrefix, signToken, TEST_API_KEY } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { dashboardExpressions, metricNames, readRules, startPrometheus, type PrometheusServer } from '../support/prometheus';
import { scrape } from '../support/scrape';
import { CATEGORY_BASE_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { eventually } from '../support/eventually';

/** Long enough for two rule evaluations at the 1 s interval; the file's own durations are minutes. */
const TEST_FOR = '2s';

let gateway: ServiceProcess;
let tripWriter: ServiceProcess;
let groupWriter: ServiceProcess;
let eventProcessor: ServiceProcess;
let prometheus: PrometheusServer;

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

async function activeAlerts(name: string): Promise<Alert[]> {
  const { alerts } = await prometheus.api<{ alerts: Alert[] }>('alerts');
  return alerts.filter((alert) => alert.labels.alertname === name);
}

async function targetsUp(): Promise<Record<string, number>> {
  const result = await prometheus.api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>('query', {
    query: 'sum by (service) (up)',
  });
  return Object.fromEntries(result.result.map((sample) => [sample.metric.service!, Number(sample.value[1])]));
}

beforeAll(async () => {
  const prefix = await provisionedPrefix('prometheus-alerts');
  const env = baseEnv(prefix, { LOG_LEVEL: 'info', KAFKA_SESSION_TIMEOUT_MS: '6000' });
  tripWriter = await spawnService('trip-writer', env);
  groupWriter = await spawnService('group-writer', env);
  eventProcessor = await spawnService('event-processor', env);
  gateway = await spawnService('gateway', env);

  // Traffic of each kind, so that the labelled series exist as they do in production.
  const auth = { authorization: `Bearer ${await signToken()}` };
  expect((await postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, buildTrip(), auth)).status).toBe(200);
  expect((await postJson(`${gateway.url}${VEHICLE_GROUP_PATH}`, buildGroup(), auth)).status).toBe(200);
  const unknownCategory = `${gateway.url}${CATEGORY_BASE_PATH}/00000000-0000-4000-8000-000000000000`;
  expect((await fetch(unknownCategory, { headers: { authorization: TEST_API_KEY } })).status).toBe(404);

  const rules = readRules().map((rule) => (rule.for ? { ...rule, for: TEST_FOR } : rule));
  prometheus = await startPrometheus({
    rules,
    targets: [
      { service: 'gateway', address: `127.0.0.1:${gateway.port}` },
      { service: 'trip-writer', address: `127.0.0.1:${tripWriter.port}` },
      { service: 'group-writer', address: `127.0.0.1:${groupWriter.port}` },
      { service: 'event-processor', address: `127.0.0.1:${eventProcessor.port}` },
    ],
  });
  await eventually(async () => Object.keys(await targetsUp()).length === 4, 30_000, {
    what: 'Prometheus to scrape the four services',
    intervalMs: 250,
  });
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test('every expression of the dashboard and the rules parses, and every metric it names is served by the stack', async () => {
  const served = new Set<string>();
  for (const service of [gateway, tripWriter, groupWriter, eventProcessor]) {
    const metrics = await scrape(`${service.url}/metrics`);
    for (const line of metrics.text.split('\n')) {
      const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line)?.[1];
      if (name) served.add(name);
    }
  }
  // `up` is the one series Prometheus makes itself, per target; it must exist for every service.
  expect(await targetsUp()).toEqual({ gateway: 1, 'trip-writer': 1, 'group-writer': 1, 'event-processor': 1 });
  served.add('up');

  const expressions = [
    ...dashboardExpressions().map(({ panel, expr }) => ({ where: `dashboard panel "${panel}"`, expr })),
    ...readRules().map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ];
  expect(expressions.length).toBeGreaterThan(20);
  const problems: string[] = [];
  for (const { where, expr } of expressions) {
    // Prometheus's own parser (and evaluator) on the test's server.
    await prometheus.api('query', { query: expr }).catch((error: Error) => problems.push(`${where}: ${error.message}`));
    let names: string[] = [];
    try {
      names = metricNames(expr);
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
    }
    for (const name of names) if (!served.has(name)) problems.push(`${where}: ${name} is not served`);
  }
  expect(problems).toEqual([]);
}, 60_000);

test('a trip-writer killed with SIGKILL: FleetWriterDown fires for it through the Prometheus API', async () => {
  // Before: all four scraped, and the alert neither pending nor firing.
  await eventually(async () => (await activeAlerts('FleetWriterDown')).length === 0, 30_000, {
    what: 'FleetWriterDown to be inactive',
    intervalMs: 250,
  });
  expect(await targetsUp()).toEqual({ gateway: 1, 'trip-writer': 1, 'group-writer': 1, 'event-processor': 1 });

  tripWriter.kill('SIGKILL');
  expect(await tripWriter.exited).toBe('SIGKILL');

  let firing: Alert[] = [];
  await eventually(
    async () => {
      firing = (await activeAlerts('FleetWriterDown')).filter((alert) => alert.state === 'firing');
      return firing.length > 0;
    },
    60_000,
    { what: 'FleetWriterDown to fire', intervalMs: 250 },
  );
  expect(firing.map((alert) => alert.labels)).toEqual([
    {
      alertname: 'FleetWriterDown',
      severity: 'critical',
      job: 'trip-writer',
      service: 'trip-writer',
      instance: `127.0.0.1:${tripWriter.port}`,
    },
  ]);
}, 120_000);

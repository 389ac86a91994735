// The benchmark harness, run for a second per scenario so that it cannot rot. Nothing here asserts a
// speed: it asserts that every scenario ran against the real stack, answered without errors, and
// that the report and chart describe what was measured.
import { markdownTable, svgChart } from './report';
import { dropBenchDatabase, runBench, type BenchReport } from './run-bench';

jest.setTimeout(180_000);

const databaseUrl = (() => {
  const url = new URL(process.env.FLEET_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  url.pathname = `/fleet_bench_test_${process.pid}`;
  return url.toString();
})();

let report: BenchReport;

beforeAll(async () => {
  report = await runBench({
    connections: 4,
    durationSeconds: 1,
    warmupSeconds: 0,
    databaseUrl,
    kafkaBrokers: process.env.FLEET_TEST_KAFKA_BROKERS,
  });
});
afterAll(async () => {
  await dropBenchDatabase(databaseUrl);
});

test('every scenario runs against the started stack and is answered without errors', () => {
  expect(report.scenarios.map((scenario) => scenario.name)).toEqual([
    'hello-world (baseline)',
    'naive INSERT per request',
    'category read, warm cache',
    'trip create, JSON',
    'trip create, form',
    'trip batch, 100 positions',
    'vehicle group create, 10 ids',
  ]);
  for (const scenario of report.scenarios) {
    expect(scenario.requestsPerSecond).toBeGreaterThan(0);
    expect(scenario.errors).toBe(0);
  }
  expect(report.scenarios[0]!.ratio).toBe(1);
});

test('each scenario is a ratio to the hello-world runs just before and after it, and hello-world is the mean of its runs', () => {
  const [hello, ...rest] = report.scenarios;
  for (const scenario of rest) {
    expect(scenario.baseline.requestsPerSecond).toBeGreaterThan(0);
    expect(scenario.ratio).toBeCloseTo(scenario.requestsPerSecond / scenario.baseline.requestsPerSecond, 10);
  }
  const runs = report.helloWorldRuns;
  expect(runs).toHaveLength(rest.length + 1);
  rest.forEach((scenario, index) => expect(scenario.baseline.requestsPerSecond).toBeCloseTo((runs[index]! + runs[index + 1]!) / 2, 10));
  expect(hello!.requestsPerSecond).toBeCloseTo(runs.reduce((sum, run) => sum + run, 0) / runs.length, 10);
  expect(markdownTable(report)).toContain(
    `| ${rest[0]!.name} | ${Math.round(rest[0]!.requestsPerSecond)} | ${Math.round(rest[0]!.baseline.requestsPerSecond)} |`,
  );
});

test('the peak memory of every service is read, and every target is reported', () => {
  expect(Object.keys(report.peakRssMiB).sort()).toEqual(['gateway', 'group-writer', 'trip-writer']);
  for (const mib of Object.values(report.peakRssMiB)) expect(mib).toBeGreaterThan(0);
  expect(report.targets.map((target) => target.what)).toEqual([
    'category read / hello-world',
    'trip create / hello-world',
    'trip create / naive design',
    'errors, all scenarios',
    'trip create p99 / hello-world p99',
    'trip batch positions/s / trip create req/s',
    'gateway peak RSS (MiB)',
  ]);
});

test('the batch scenario counts the positions it stored, and is compared with single posts relative to the hello-world runs around each', () => {
  const batch = report.scenarios.find((scenario) => scenario.name === 'trip batch, 100 positions')!;
  const trip = report.scenarios.find((scenario) => scenario.name === 'trip create, JSON')!;
  expect(batch.positionsPerSecond).toBeCloseTo(batch.requestsPerSecond * 100, 6);
  expect(report.scenarios.filter((scenario) => scenario.positionsPerSecond !== undefined)).toEqual([batch]);
  const gain = report.targets.find((target) => target.what === 'trip batch positions/s / trip create req/s')!;
  expect(gain.value).toBeCloseTo(batch.positionsPerSecond! / batch.baseline.requestsPerSecond / trip.ratio, 10);
  expect(gain).toMatchObject({ target: '>= 8x', met: gain.value >= 8 });
  expect(markdownTable(report)).toContain(
    `Positions stored per second, trip batch, 100 positions: ${Math.round(batch.positionsPerSecond!)}`,
  );
});

test('the table and the chart show every scenario', () => {
  const table = markdownTable(report);
  const chart = svgChart(report);
  for (const scenario of report.scenarios) {
    expect(table).toContain(`| ${scenario.name} |`);
    expect(chart).toContain(scenario.name);
  }
  expect(chart.startsWith('<svg')).toBe(true);
});

test('the report names the broker the stack ran on, as its launcher named it', () => {
  expect(report.broker).toBe(`the Kafka at KAFKA_BROKERS`);
  expect(markdownTable(report)).toContain('Broker: the Kafka at KAFKA_BROKERS');
});

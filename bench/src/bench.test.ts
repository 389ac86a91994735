// The benchmark harness, run for a second per scenario so that it cannot rot. Nothing here asserts a
// speed: it asserts that every scenario ran against the real stack, answered without errors, and
// that the report and chart describe what was measured.
import { Pool } from 'pg';
import { markdownTable, svgChart } from './report';
import type { BenchReport } from './bench-types';
import { dropBenchDatabase, runBench } from './run-bench';
import { volumeImei } from './volume';

jest.setTimeout(180_000);

const databaseUrl = (() => {
  const url = new URL(process.env.FLEET_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  url.pathname = `/fleet_bench_test_${process.pid}`;
  return url.toString();
})();

/** An earlier run as the history records it, with only what the comparison reads. */
const earlierRun = (startedAt: string, connections: number, partitioned: boolean | undefined, tripCreateRatio: number) =>
  ({
    startedAt,
    settings: { connections, durationSeconds: 15, warmupSeconds: 3 },
    ...(partitioned === undefined ? {} : { volume: { tripLocationsPartitioned: partitioned } }),
    scenarios: [{ name: 'trip create, JSON', ratio: tripCreateRatio }],
  }) as BenchReport;

const history = [
  earlierRun('2026-11-01T00:00:00.000Z', 4, undefined, 0.1),
  earlierRun('2026-11-02T00:00:00.000Z', 4, false, 0.2),
  earlierRun('2026-11-03T00:00:00.000Z', 64, false, 0.3),
  earlierRun('2026-11-04T00:00:00.000Z', 4, true, 0.4),
];

let report: BenchReport;
let db: Pool;

beforeAll(async () => {
  report = await runBench({
    connections: 4,
    scaleOutRate: 20,
    durationSeconds: 1,
    warmupSeconds: 0,
    databaseUrl,
    kafkaBrokers: process.env.FLEET_TEST_KAFKA_BROKERS,
    volume: { positions: 20_000, devices: 100 },
    history,
  });
  db = new Pool({ connectionString: databaseUrl, max: 1 });
});
afterAll(async () => {
  await db?.end();
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
    'trip batch, 100 devices',
    'vehicle group create, 10 ids',
    'last-location read',
    'history page, one device one day',
    'trip create, followed live on 100 streams',
    'Teltonika Codec 8, packets of 10 records',
    'scale-out: 1 gateway + 1 trip-writer, trip create JSON',
    'scale-out: 2 gateways + 2 trip-writers, trip create JSON',
    'scale-out: 4 gateways + 4 trip-writers, trip create JSON',
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
  expect(Object.keys(report.peakRssMiB).sort()).toEqual(['event-processor', 'gateway', 'group-writer', 'teltonika', 'trip-writer']);
  for (const mib of Object.values(report.peakRssMiB)) expect(mib).toBeGreaterThan(0);
  expect(report.targets.map((target) => target.what)).toEqual([
    'category read / hello-world',
    'trip create / hello-world',
    'gateway CPU per trip create / hello-world CPU per request',
    'trip create / naive design',
    'errors, all scenarios',
    'trip create p99 / hello-world p99',
    'trip batch positions/s / trip create req/s',
    'trip batch of 100 devices positions/s / trip batch of one device positions/s',
    'last-location read / hello-world',
    'history page p99 (ms)',
    'trip create / hello-world, against the last run before partitioning',
    'gateway peak RSS (MiB)',
    'scale-out 2+2 / 1+1 positions/s',
    'scale-out 2+2 / 1+1 whole-system CPU per trip create',
    'scale-out 4+4 / 1+1 positions/s',
    'scale-out 4+4 / 1+1 whole-system CPU per trip create',
    'live stream: from the 200 to the event, p50 (ms)',
    'live stream: from the 200 to the event, p99 (ms)',
    'live stream: gateway CPU per delivered event (µs), beyond the create',
  ]);
});

test("every followed create's position reached its stream, and the delay from its 200 is reported", () => {
  const live = report.scenarios.find((scenario) => scenario.name === 'trip create, followed live on 100 streams')!;
  // A create whose event never came counts as an error of the scenario, and there are none.
  expect(live.errors).toBe(0);
  expect(live.streamDelay!.events).toBeGreaterThan(0);
  expect(live.streamDelay!.p50Ms).toBeLessThanOrEqual(live.streamDelay!.p99Ms);
  expect(markdownTable(report)).toContain(`Live stream events, ${live.name}: ${live.streamDelay!.events},`);
});

test('the volume is generated in the database: every device with the same number of positions inside the 30 days, its newest as its last location', async () => {
  const volume = report.volume!;
  expect(volume).toMatchObject({ positions: 20_000, devices: 100, days: 30 });
  expect(Date.parse(volume.to) - Date.parse(volume.from)).toBe(30 * 86_400_000);
  expect(volume.generationSeconds).toBeGreaterThan(0);
  const { rows: shape } = await db.query<{ relkind: string }>(`SELECT relkind FROM pg_class WHERE relname = 'trip_locations'`);
  expect(volume.tripLocationsPartitioned).toBe(shape[0]!.relkind === 'p');

  const { rows: perDevice } = await db.query<{ imei: string; positions: number; first: Date; last: Date; last_id: string }>(
    `SELECT imei, count(*)::int AS positions, min(gps_time) AS first, max(gps_time) AS last,
            (array_agg(id ORDER BY gps_time DESC))[1] AS last_id
     FROM trip_locations WHERE imei LIKE '35%' GROUP BY imei ORDER BY imei`,
  );
  expect(perDevice.map((row) => row.imei)).toEqual(Array.from({ length: 100 }, (_, i) => volumeImei(i + 1)));
  for (const row of perDevice) {
    expect(row.positions).toBe(200);
    expect(row.first.getTime()).toBeGreaterThanOrEqual(Date.parse(volume.from));
    expect(row.last.getTime()).toBeLessThan(Date.parse(volume.to));
  }
  const { rows: lastLocations } = await db.query<{ imei: string; gps_time: Date; trip_location_id: string }>(
    `SELECT imei, gps_time, trip_location_id FROM device_last_locations WHERE imei LIKE '35%' ORDER BY imei`,
  );
  expect(lastLocations).toEqual(perDevice.map((row) => ({ imei: row.imei, gps_time: row.last, trip_location_id: row.last_id })));
  expect(markdownTable(report)).toContain(
    `Volume: 20000 positions of 100 devices over 30 days, generated in the database in ${Number(volume.generationSeconds.toFixed(1))} s`,
  );

  const { rows: size } = await db.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(relid)) AS bytes FROM pg_partition_tree('trip_locations')`,
  );
  // The scenarios stored positions of their own since: the volume's share is at most the table's size now.
  expect(volume.bytesPerPosition).toBeGreaterThan(0);
  expect(volume.bytesPerPosition! * volume.positions).toBeLessThanOrEqual(Number(size[0]!.bytes));
});

test('the capacity model is read from the CPU per position of the single and the batch posts of the same run', () => {
  const capacity = report.capacity!;
  const single = report.scenarios.find((scenario) => scenario.name === 'trip create, JSON')!.cpuMicrosPerRequest;
  const batch = report.scenarios.find((scenario) => scenario.name === 'trip batch, 100 positions')!.cpuMicrosPerPosition!;
  expect(capacity.singlePosts.gateway).toBeCloseTo(1_000_000 / single.gateway!, 6);
  expect(capacity.batches['trip-writer']).toBeCloseTo(1_000_000 / batch['trip-writer']!, 6);
  expect(capacity.batchPositions).toBe(100);
  expect(capacity.plans.map((plan) => [plan.positionsPerSecond, plan.devices])).toEqual([
    [1_000, 10_000],
    [10_000, 100_000],
    [100_000, 1_000_000],
  ]);
  expect(markdownTable(report)).toContain('| 100 positions a request |');
  expect(capacity.plannedFrom).toBe('trip create, JSON');
});

test('the reads of the volume are reported against their targets: last locations as a ratio to hello-world, history pages by their p99', () => {
  const target = (what: string) => report.targets.find((t) => t.what === what)!;
  const lastLocation = report.scenarios.find((scenario) => scenario.name === 'last-location read')!;
  const historyPage = report.scenarios.find((scenario) => scenario.name === 'history page, one device one day')!;
  expect(target('last-location read / hello-world')).toEqual({
    what: 'last-location read / hello-world',
    value: lastLocation.ratio,
    target: '>= 0.7',
    met: lastLocation.ratio >= 0.7,
  });
  expect(target('history page p99 (ms)')).toEqual({
    what: 'history page p99 (ms)',
    value: historyPage.p99Ms,
    target: '< 20',
    met: historyPage.p99Ms < 20,
  });
  expect(markdownTable(report)).toContain(`| history page p99 (ms) | ${Number(historyPage.p99Ms.toFixed(3))} | < 20 |`);
});

test('trip creates are held against the last run before partitioning at the same connections, as ratios to hello-world', () => {
  const trip = report.scenarios.find((scenario) => scenario.name === 'trip create, JSON')!;
  expect(report.tripCreateBefore).toEqual({ startedAt: '2026-11-02T00:00:00.000Z', ratio: 0.2 });
  const target = report.targets.find((t) => t.what === 'trip create / hello-world, against the last run before partitioning')!;
  expect(target.value).toBeCloseTo(trip.ratio / 0.2, 10);
  expect(target).toMatchObject({ target: '>= 1', met: trip.ratio >= 0.2 });
  expect(markdownTable(report)).toContain(
    'Trip creates compared with the run of 2026-11-02T00:00:00.000Z, the last before partitioning: ratio 0.2',
  );
});

test('the batch scenario counts the positions it stored, and is compared with single posts relative to the hello-world runs around each', () => {
  const batch = report.scenarios.find((scenario) => scenario.name === 'trip batch, 100 positions')!;
  const trip = report.scenarios.find((scenario) => scenario.name === 'trip create, JSON')!;
  expect(batch.positionsPerSecond).toBeCloseTo(batch.requestsPerSecond * 100, 6);
  expect(report.scenarios.filter((scenario) => scenario.positionsPerSecond !== undefined).map((scenario) => scenario.name)).toEqual([
    'trip batch, 100 positions',
    'trip batch, 100 devices',
    'Teltonika Codec 8, packets of 10 records',
    'scale-out: 1 gateway + 1 trip-writer, trip create JSON',
    'scale-out: 2 gateways + 2 trip-writers, trip create JSON',
    'scale-out: 4 gateways + 4 trip-writers, trip create JSON',
  ]);
  const teltonika = report.scenarios.find((scenario) => scenario.name.startsWith('Teltonika'))!;
  expect(teltonika.positionsPerSecond).toBeCloseTo(teltonika.requestsPerSecond * 10, 6);
  expect(teltonika.cpuMicrosPerPosition!.gateway).toBeGreaterThan(0);
  const manyDevices = report.scenarios.find((scenario) => scenario.name === 'trip batch, 100 devices')!;
  expect(manyDevices.positionsPerSecond).toBeCloseTo(manyDevices.requestsPerSecond * 100, 6);
  const spread = report.targets.find((target) => target.what.startsWith('trip batch of 100 devices'))!;
  expect(spread.value).toBeCloseTo(manyDevices.positionsPerSecond! / batch.positionsPerSecond!, 10);
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

test('every scenario reports the CPU per request of the server it measures, PostgreSQL, the broker and the load generator, and the total is their sum', () => {
  const parts = ['gateway', 'trip-writer', 'group-writer', 'event-processor', 'broker', 'postgres', 'loadGenerator'] as const;
  for (const scenario of report.scenarios) {
    const cpu = scenario.cpuMicrosPerRequest;
    expect(Object.keys(cpu).sort()).toEqual([...parts, 'total'].sort());
    for (const part of ['gateway', 'broker', 'postgres', 'loadGenerator'] as const) {
      expect(Number.isFinite(cpu[part])).toBe(true);
      expect(cpu[part]).toBeGreaterThanOrEqual(0);
    }
    expect(cpu.total).toBeCloseTo(
      parts.reduce((sum, part) => sum + (cpu[part] ?? 0), 0),
      6,
    );
  }
  const batch = report.scenarios.find((scenario) => scenario.name === 'trip batch, 100 positions')!;
  expect(batch.cpuMicrosPerPosition!.total).toBeCloseTo(batch.cpuMicrosPerRequest.total / 100, 6);
  // The writers run in the started stack, whichever scenario is measured.
  const trip = report.scenarios.find((scenario) => scenario.name === 'trip create, JSON')!;
  expect(trip.cpuMicrosPerRequest['trip-writer']).toBeGreaterThanOrEqual(0);
  expect(trip.cpuMicrosPerRequest['group-writer']).toBeGreaterThanOrEqual(0);
  // The event processor reads every stored position, so the writes cost it CPU too. Checked on the
  // batches: in the test's one-second scenarios their thousands of positions take it many of /proc's
  // 10 ms ticks, where the creates' hundred or so may take none.
  expect(batch.cpuMicrosPerRequest['event-processor']).toBeGreaterThan(0);

  const markdown = markdownTable(report);
  expect(markdown).toContain('CPU per request, µs');
  const cpuSection = markdown.slice(markdown.indexOf('CPU per request, µs'));
  expect(cpuSection).toContain(
    '| scenario | gateway (or baseline server) | trip-writer | group-writer | event processor | broker | PostgreSQL | load generator | total |',
  );
  for (const scenario of report.scenarios) {
    expect(cpuSection).toContain(`| ${scenario.name} | ${Number(scenario.cpuMicrosPerRequest.gateway!.toFixed(1))} |`);
  }
  expect(cpuSection).toContain(`| trip batch, 100 positions, per position | ${Number(batch.cpuMicrosPerPosition!.gateway!.toFixed(1))} |`);
});

test('the scale-out posts trip creates through one gateway and trip-writer, then through two of each, and reports the quotient of their positions per second', () => {
  const one = report.scenarios.find((scenario) => scenario.name === 'scale-out: 1 gateway + 1 trip-writer, trip create JSON')!;
  const two = report.scenarios.find((scenario) => scenario.name === 'scale-out: 2 gateways + 2 trip-writers, trip create JSON')!;
  // One position per create: positions per second are requests per second, and no per-position CPU row repeats them.
  for (const scenario of [one, two]) {
    expect(scenario.positionsPerSecond).toBe(scenario.requestsPerSecond);
    expect(scenario.cpuMicrosPerPosition).toBeUndefined();
  }
  // Both gateways answered creates in the measured window, and each of the four processes used CPU.
  expect(Object.keys(two.requestsByGateway!)).toEqual(['gateway 1', 'gateway 2']);
  for (const count of Object.values(two.requestsByGateway!)) expect(count).toBeGreaterThan(0);
  expect(Object.keys(two.cpuMicrosPerRequestByProcess!)).toEqual(['gateway 1', 'gateway 2', 'trip-writer 1', 'trip-writer 2']);
  for (const micros of Object.values(two.cpuMicrosPerRequestByProcess!)) expect(micros).toBeGreaterThanOrEqual(0);
  // The gateway and trip-writer columns are each the two processes together.
  const byProcess = two.cpuMicrosPerRequestByProcess!;
  expect(two.cpuMicrosPerRequest.gateway).toBeCloseTo(byProcess['gateway 1']! + byProcess['gateway 2']!, 6);
  expect(two.cpuMicrosPerRequest['trip-writer']).toBeCloseTo(byProcess['trip-writer 1']! + byProcess['trip-writer 2']!, 6);
  expect(one.requestsByGateway).toBeUndefined();
  expect(one.cpuMicrosPerRequestByProcess).toBeUndefined();

  const gain = report.targets.find((target) => target.what === 'scale-out 2+2 / 1+1 positions/s')!;
  expect(gain).toEqual({
    what: 'scale-out 2+2 / 1+1 positions/s',
    value: two.positionsPerSecond! / one.positionsPerSecond!,
    target: 'none set',
    met: null,
  });
  const markdown = markdownTable(report);
  expect(markdown).toContain(`| scale-out 2+2 / 1+1 positions/s | ${Number(gain.value.toFixed(3))} | none set | reported |`);
  expect(markdown).toContain(`Positions stored per second, ${two.name}: ${Math.round(two.positionsPerSecond!)}`);
  expect(markdown).toContain(
    `Requests answered by each gateway, ${two.name}: gateway 1 ${two.requestsByGateway!['gateway 1']}, gateway 2 ${two.requestsByGateway!['gateway 2']}`,
  );
  expect(markdown).toContain(`CPU per request by process, µs, ${two.name}: gateway 1 ${Number(byProcess['gateway 1']!.toFixed(1))}, `);
});

test('each scale-out step gives every gateway the same paced rate of creates, so that each instance carries the same load at every step', () => {
  expect(report.settings.scaleOutRate).toBe(20);
  expect(markdownTable(report)).toContain('4 connections (scale-out: 20 creates/s per gateway), 1 s per scenario');
  for (const [name, gateways] of [
    ['scale-out: 1 gateway + 1 trip-writer, trip create JSON', 1],
    ['scale-out: 2 gateways + 2 trip-writers, trip create JSON', 2],
    ['scale-out: 4 gateways + 4 trip-writers, trip create JSON', 4],
  ] as const) {
    const step = report.scenarios.find((scenario) => scenario.name === name)!;
    // 20 to each gateway over the measured second, every one answered 200.
    if (gateways > 1) expect(Object.values(step.requestsByGateway!)).toEqual(Array(gateways).fill(20));
    expect(step.requestsPerSecond).toBe(20 * gateways);
    expect(step.errors).toBe(0);
  }
});

test('the scale-out goes on to four gateways and four trip-writers, each answering and working, and holds each step to 1 + 1 in whole-system CPU per create', () => {
  const one = report.scenarios.find((scenario) => scenario.name === 'scale-out: 1 gateway + 1 trip-writer, trip create JSON')!;
  const four = report.scenarios.find((scenario) => scenario.name === 'scale-out: 4 gateways + 4 trip-writers, trip create JSON')!;
  const labels = [1, 2, 3, 4].map((i) => `gateway ${i}`);
  expect(Object.keys(four.requestsByGateway!)).toEqual(labels);
  for (const count of Object.values(four.requestsByGateway!)) expect(count).toBeGreaterThan(0);
  expect(Object.keys(four.cpuMicrosPerRequestByProcess!)).toEqual([...labels, ...[1, 2, 3, 4].map((i) => `trip-writer ${i}`)]);
  const system = (scenario: typeof one) => scenario.cpuMicrosPerRequest.total - scenario.cpuMicrosPerRequest.loadGenerator!;
  const cpu = report.targets.find((target) => target.what === 'scale-out 4+4 / 1+1 whole-system CPU per trip create')!;
  expect(cpu.value).toBeCloseTo(system(four) / system(one), 10);
  expect(cpu).toMatchObject({ target: '<= 1.3', met: cpu.value <= 1.3 });
});

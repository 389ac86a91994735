// `npm run bench:replication` run for two seconds a step on one node and on three, so that it cannot rot.
// Nothing here asserts a speed: it asserts that Kafka's own producer and the system both ran on the
// bench's nodes, that the nodes' requests were counted by API, and that the report says what was measured.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ReplicationReport } from './replication';
import { dropBenchDatabase } from './run-bench';

jest.setTimeout(600_000);

const repoRoot = path.resolve(__dirname, '..', '..');
const resultsDir = mkdtempSync(path.join(tmpdir(), 'fleet-replication-'));
const databaseUrl = `postgres://root@127.0.0.1:5432/fleet_bench_replication_test_${process.pid}`;
let report: ReplicationReport;
let printed = '';

beforeAll(async () => {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench/dist/replication-main.js')], {
    env: {
      ...process.env,
      BENCH_REPLICATION_SECONDS: '2',
      BENCH_REPLICATION_WARMUP_SECONDS: '2',
      BENCH_REPLICATION_RATES: '40,80',
      BENCH_REPLICATION_NODES: '1,3',
      BENCH_RESULTS_DIR: resultsDir,
      BENCH_DATABASE_URL: databaseUrl,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  report = JSON.parse(readFileSync(path.join(resultsDir, 'replication.json'), 'utf8')) as ReplicationReport;
});

afterAll(async () => {
  rmSync(resultsDir, { recursive: true, force: true });
  await dropBenchDatabase(databaseUrl);
});

test('each shape ran Kafka’s own producer and the system at the same rates, every create answered', () => {
  expect(report.shapes.map((shape) => shape.nodes)).toEqual([1, 3]);
  for (const shape of report.shapes) {
    expect(shape.kafka.map((step) => step.rate)).toEqual([40, 80]);
    expect(shape.system.map((step) => step.rate)).toEqual([40, 80]);
    for (const step of shape.kafka) {
      expect(step.records).toBe(step.rate * 2);
      expect(step.brokerMicrosPerRecord).toBeGreaterThan(0);
    }
    for (const step of shape.system) {
      expect(step.errors).toBe(0);
      expect(step.createsPerSecond).toBeGreaterThan(0);
      expect(step.cores.gateway).toBeGreaterThan(0);
      expect(step.brokerMicrosPerCreate).toBeGreaterThan(0);
    }
    expect(shape.idleBrokerCores).toBeGreaterThan(0);
  }
});

test("the nodes' requests were counted by API: each create was produced, fetched and replicated to the followers on three", () => {
  const [one, three] = report.shapes;
  for (const shape of [one!, three!]) {
    const perCreate = shape.system[0]!.requestsPerCreate!;
    expect(perCreate.Produce).toBeGreaterThan(0.5);
    expect(perCreate.FetchConsumer).toBeGreaterThan(0);
    expect(shape.restRequestsPerSecond!.Heartbeat).toBeGreaterThan(0);
  }
  expect(one!.system[0]!.requestsPerCreate!.FetchFollower).toBeUndefined();
  expect(three!.system[0]!.requestsPerCreate!.FetchFollower).toBeGreaterThan(0);
});

test('the printed report compares the two at each rate and plans the production shape from its fits', () => {
  expect(printed).toContain('broker CPU per create');
  expect(printed).toMatch(/- 3 nodes at 40 a second: broker CPU per create [\d.]+× Kafka's per record \(goal <= 3×\): (met|MISSED)/);
  expect(printed).toMatch(/\| 100,000 \| extrapolated \|/);
});

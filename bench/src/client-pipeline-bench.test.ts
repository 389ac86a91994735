// `npm run bench:clients` run for two seconds a step, so that it cannot rot. Nothing here asserts a
// speed: it asserts that each client ran the pipeline on the bench's broker with every command replied
// to, and that its process's CPU, the broker's and the broker's requests by API were read at each step.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClientStepFigures } from './client-pipeline';

jest.setTimeout(300_000);

const repoRoot = path.resolve(__dirname, '..', '..');
const resultsDir = mkdtempSync(path.join(tmpdir(), 'fleet-clients-'));
let figures: ClientStepFigures[];

beforeAll(async () => {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench/dist/client-pipeline-main.js')], {
    env: { ...process.env, BENCH_CLIENTS_SECONDS: '2', BENCH_CLIENTS_WARMUP_SECONDS: '2', BENCH_RESULTS_DIR: resultsDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  ({ figures } = JSON.parse(readFileSync(path.join(resultsDir, 'client-pipeline.json'), 'utf8')) as { figures: ClientStepFigures[] });
});

afterAll(() => rmSync(resultsDir, { recursive: true, force: true }));

test('each client ran the pipeline at rest and at each rate, every command replied to, its CPU and the broker’s requests read', () => {
  expect(figures.map((row) => [row.client, row.ratePerSecond])).toEqual([
    ['kafkajs', 0],
    ['kafkajs', 50],
    ['kafkajs', 150],
    ['@platformatic/kafka', 0],
    ['@platformatic/kafka', 50],
    ['@platformatic/kafka', 150],
  ]);
  for (const row of figures) {
    expect(row.result.sent).toBe(row.ratePerSecond * 2);
    expect(row.result.replied).toBe(row.result.sent);
    expect(row.brokerCpu).toBeGreaterThan(0);
    expect(row.brokerRequests?.Fetch).toBeGreaterThan(0);
    if (row.ratePerSecond > 0) {
      expect(row.clientCpu).toBeGreaterThan(0);
      // One produce for each command and each reply, about two a create whichever the client; read over
      // the step's whole window, which outlasts the sending on a loaded machine (136 a second at 150 in a
      // CI run), so at least half the rate.
      expect(row.brokerRequests?.Produce).toBeGreaterThan(row.ratePerSecond / 2);
    }
  }
});

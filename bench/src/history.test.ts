// The bench's history file: appended run by run, read back whole, and the run a partitioned trip_locations
// is held against picked from it; and the committed history holds such a run for the default settings.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendHistory, HISTORY_FILE, lastRunBeforePartitioning, readHistory } from './history';
import type { BenchReport } from './bench-types';
import { repoRoot } from './load-driver';

const run = (startedAt: string, connections: number, partitioned?: boolean) =>
  ({
    startedAt,
    settings: { connections, durationSeconds: 15, warmupSeconds: 3 },
    ...(partitioned === undefined ? {} : { volume: { tripLocationsPartitioned: partitioned } }),
    scenarios: [],
  }) as unknown as BenchReport;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('runs are appended one JSON line each and read back in order; no file is no history', () => {
  const file = path.join(dir, HISTORY_FILE);
  expect(readHistory(file)).toEqual([]);
  appendHistory(file, run('2026-11-01T00:00:00.000Z', 64));
  appendHistory(file, run('2026-11-02T00:00:00.000Z', 64, true));
  expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
  expect(readHistory(file).map((entry) => entry.startedAt)).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-02T00:00:00.000Z']);
});

test('the run before partitioning is the newest at the same connections whose trip_locations was one table, or recorded before runs said', () => {
  const history = [
    run('2026-11-01T00:00:00.000Z', 64),
    run('2026-11-02T00:00:00.000Z', 64, false),
    run('2026-11-03T00:00:00.000Z', 4, false),
    run('2026-11-04T00:00:00.000Z', 64, true),
  ];
  expect(lastRunBeforePartitioning(history, 64)?.startedAt).toBe('2026-11-02T00:00:00.000Z');
  expect(lastRunBeforePartitioning(history.slice(0, 1), 64)?.startedAt).toBe('2026-11-01T00:00:00.000Z');
  expect(lastRunBeforePartitioning(history, 8)).toBeUndefined();
});

test('the committed history holds a run before partitioning at 64 connections, with its trip create ratio', () => {
  const before = lastRunBeforePartitioning(readHistory(path.join(repoRoot, 'bench', 'results', HISTORY_FILE)), 64);
  expect(before?.scenarios.find((scenario) => scenario.name === 'trip create, JSON')?.ratio).toBeGreaterThan(0);
});

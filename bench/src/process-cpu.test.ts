// The reading of CPU time from /proc that the benchmark's CPU per request rests on.
import { readFileSync } from 'node:fs';
import {
  clockTicksPerSecond,
  cpuBetween,
  cpuSnapshot,
  listenerPid,
  parseProcStat,
  perUnit,
  postgresPids,
  processCpuBetween,
  type CpuPart,
  type CpuSnapshot,
} from './process-cpu';

/** A stat line with the given command name, utime 250, stime 75 and starttime 9000. */
const statLine = (comm: string) => `123 (${comm}) S 1 123 123 0 -1 4194560 500 0 0 0 250 75 0 0 20 0 1 0 9000 1000000 200 0 0`;

test('a stat line is read from the last parenthesis, whatever the command name holds', () => {
  expect(parseProcStat(statLine('a (b) c'))).toEqual({ comm: 'a (b) c', cpuTicks: 325, startTicks: 9000 });
  expect(parseProcStat(statLine(') S 7 8 9 10'))).toEqual({ comm: ') S 7 8 9 10', cpuTicks: 325, startTicks: 9000 });
  expect(parseProcStat(statLine('node'))).toEqual({ comm: 'node', cpuTicks: 325, startTicks: 9000 });
});

test('this process reads as itself', () => {
  expect(parseProcStat(readFileSync('/proc/self/stat', 'utf8')).comm).toBe(readFileSync('/proc/self/comm', 'utf8').trim());
});

test('clock ticks are 100 a second, as on every Linux', () => {
  expect(clockTicksPerSecond()).toBe(100);
});

test('the PostgreSQL the tests run on is found: the postmaster listening on its port is among its processes', () => {
  const port = Number(new URL(process.env.FLEET_TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/x').port || 5432);
  const postmaster = listenerPid(port);
  expect(postmaster).not.toBeNull();
  expect(postgresPids()).toContain(postmaster);
});

test('CPU between two snapshots is that of the processes found, null for a part without one, and the parts add up to the total', () => {
  const sources = {
    gateway: () => [process.pid],
    'trip-writer': () => [],
    'group-writer': () => [],
    'event-processor': () => [],
    broker: () => [],
    postgres: postgresPids,
  };
  const start = cpuSnapshot(sources);
  // Work until the kernel has counted some of it, a few clock ticks.
  const ticks = () => parseProcStat(readFileSync('/proc/self/stat', 'utf8')).cpuTicks;
  const ticksAtStart = ticks();
  while (ticks() < ticksAtStart + 3) Math.sqrt(Math.random());
  const cpu = cpuBetween(start, cpuSnapshot(sources));
  expect(cpu.gateway).toBeGreaterThan(0);
  expect(cpu.loadGenerator).toBeGreaterThan(0);
  expect(cpu.postgres).toBeGreaterThanOrEqual(0);
  expect(cpu['trip-writer']).toBeNull();

  const perRequest = perUnit(cpu, 1000);
  expect(perRequest.gateway).toBeCloseTo((cpu.gateway! * 1e6) / 1000, 6);
  expect(perRequest.broker).toBeNull();
  expect(perRequest.total).toBeCloseTo(perRequest.gateway! + perRequest.postgres! + perRequest.loadGenerator!, 6);
});

/** A snapshot holding the given CPU ticks by `pid:start` per part. */
const snapshot = (parts: Partial<Record<CpuPart, Record<string, number>>>): CpuSnapshot => ({
  parts: new Map(Object.entries(parts).map(([part, ticks]) => [part as CpuPart, new Map(Object.entries(ticks))])),
  loadGenerator: { user: 0, system: 0 },
});

test('each process of a part run by several gets its own CPU between two snapshots, whichever part it is in', () => {
  const start = snapshot({ gateway: { '10:1': 100, '11:5': 300 }, 'trip-writer': { '20:2': 50 } });
  const end = snapshot({ gateway: { '10:1': 160, '11:5': 320 }, 'trip-writer': { '20:2': 90, '21:9': 30 } });
  const ticks = clockTicksPerSecond();
  expect(processCpuBetween(start, end, 10)).toBeCloseTo(60 / ticks, 10);
  expect(processCpuBetween(start, end, 11)).toBeCloseTo(20 / ticks, 10);
  expect(processCpuBetween(start, end, 20)).toBeCloseTo(40 / ticks, 10);
  // Started inside the window: from zero, as the part's sum counts it.
  expect(processCpuBetween(start, end, 21)).toBeCloseTo(30 / ticks, 10);
  // Not a prefix of another pid: 1 is neither 10 nor 11.
  expect(processCpuBetween(start, end, 1)).toBeNull();
  const parts = cpuBetween(start, end);
  expect(parts.gateway).toBeCloseTo(processCpuBetween(start, end, 10)! + processCpuBetween(start, end, 11)!, 10);
});

test('a pid reused by another process counts that process from zero, not from the one before it', () => {
  const start = snapshot({ gateway: { '10:1': 500 } });
  const end = snapshot({ gateway: { '10:7': 25 } });
  expect(processCpuBetween(start, end, 10)).toBeCloseTo(25 / clockTicksPerSecond(), 10);
});

// The reading of CPU time from /proc that the benchmark's CPU per request rests on.
import { readFileSync } from 'node:fs';
import { clockTicksPerSecond, cpuBetween, cpuSnapshot, listenerPid, parseProcStat, perUnit, postgresPids } from './process-cpu';

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

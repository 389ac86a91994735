// What the scale-out scenario reads to copy a running service and to know that the copy has its share
// of the work: a process's command line and environment from /proc, and a counter from /metrics.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { environOf, nulSeparated, sampleSum, startTwin } from './scale-out';

test('a /proc file of NUL-terminated strings reads as its strings, empty ones dropped', () => {
  expect(nulSeparated('node\0--max-old-space-size=384\0/srv/main.js\0')).toEqual(['node', '--max-old-space-size=384', '/srv/main.js']);
  expect(nulSeparated('')).toEqual([]);
});

test('an environment keeps each value whole, an "=" inside it included', () => {
  expect(environOf('A=1\0DATABASE_URL=postgres://h/db?options=-c%20x=y\0EMPTY=\0')).toEqual({
    A: '1',
    DATABASE_URL: 'postgres://h/db?options=-c%20x=y',
    EMPTY: '',
  });
});

test('this process reads back as itself', () => {
  expect(nulSeparated(readFileSync('/proc/self/cmdline', 'utf8'))[0]).toBe(process.execPath);
  expect(environOf(readFileSync('/proc/self/environ', 'utf8')).PATH).toBe(process.env.PATH);
});

test("a metric's samples are summed whatever their labels, and another metric sharing its prefix is not counted", () => {
  const exposition = [
    '# HELP fleet_writer_rows_inserted_total Commands stored as new rows',
    '# TYPE fleet_writer_rows_inserted_total counter',
    'fleet_writer_rows_inserted_total{service="trip-writer"} 12',
    'fleet_writer_rows_inserted_total{service="trip-writer",partition="3"} 30',
    'fleet_writer_rows_inserted_total_extra{service="trip-writer"} 1000',
    'fleet_writer_duplicates_skipped_total{service="trip-writer"} 7',
  ].join('\n');
  expect(sampleSum(exposition, 'fleet_writer_rows_inserted_total')).toBe(42);
  expect(sampleSum('fleet_writer_rows_inserted_total 5\n', 'fleet_writer_rows_inserted_total')).toBe(5);
  expect(sampleSum(exposition, 'fleet_writer_dead_lettered_total')).toBe(0);
});

test("only the samples whose labels include the ones asked for are summed: a gateway's POSTs, not its GETs", () => {
  const exposition = [
    'fleet_http_request_duration_seconds_count{method="POST",route="/trip-location",status="200",service="gateway"} 900',
    'fleet_http_request_duration_seconds_count{method="POST",route="/trip-location",status="503",service="gateway"} 4',
    'fleet_http_request_duration_seconds_count{method="GET",route="/metrics",status="200",service="gateway"} 2',
    'fleet_http_request_duration_seconds_sum{method="POST",route="/trip-location",status="200",service="gateway"} 31.5',
  ].join('\n');
  expect(sampleSum(exposition, 'fleet_http_request_duration_seconds_count', { method: 'POST' })).toBe(904);
  expect(sampleSum(exposition, 'fleet_http_request_duration_seconds_count', { method: 'POST', status: '200' })).toBe(900);
  expect(sampleSum(exposition, 'fleet_http_request_duration_seconds_count', { method: 'PUT' })).toBe(0);
});

test('a twin runs the same command line with the same environment, changed only where told', async () => {
  // Run as the original, it says it is up on stdout; run as the twin, it sends what it was given over
  // the IPC channel the twin has, as the launcher's services do.
  const script =
    'const given = { args: process.argv.slice(1), a: process.env.TWIN_A, b: process.env.TWIN_B };' +
    "if (process.send) process.send(given); else process.stdout.write('up');" +
    'setInterval(() => {}, 1000);';
  const original = spawn(process.execPath, ['-e', script, 'first', 'second'], {
    env: { ...process.env, TWIN_A: 'kept', TWIN_B: 'original' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await once(original.stdout!, 'data');
    const twin = startTwin(original.pid!, { TWIN_B: 'changed' });
    try {
      const [given] = await once(twin, 'message');
      expect(given).toEqual({ args: ['first', 'second'], a: 'kept', b: 'changed' });
    } finally {
      twin.kill('SIGTERM');
    }
  } finally {
    original.kill('SIGTERM');
  }
});

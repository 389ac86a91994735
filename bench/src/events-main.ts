// `npm run bench:events`: the events scenario on a stack of its own (the launcher's, as `npm start` runs
// it): BENCH_EVENTS_RATE paced trip creates a second for BENCH_EVENTS_SECONDS from 1,000 devices, each
// toggling its ignition, then the events' rate, their delay and the processor's CPU (events-bench.ts);
// then what the worst geofence set the limits allow costs a fix against none (geofence-cost.ts). Saved in
// bench/results/events.json and geofence-cost.json, and written into docs/performance.md.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchToken } from './bench-requests';
import { Pool } from 'pg';
import { z } from 'zod';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { freePortRun } from '@fleet/local-stack/local-ports';
import { saveResults } from './docs-section';
import { EVENTS_SECTION, eventsTable, type EventsRun } from './events-bench';
import { startPacedStack } from './bench-stack';
import { GEOFENCE_COST_SECTION, geofenceCost, geofenceCostTable } from './geofence-cost';
import { load, repoRoot, type LoadRequest } from './load-driver';
import { listenerPid, processCpuSeconds } from './process-cpu';

const eventsEnv = z.object({
  BENCH_EVENTS_RATE: positiveInt(1000),
  BENCH_EVENTS_SECONDS: positiveInt(20),
  BENCH_DATABASE_URL: z.string().default('postgres://root@127.0.0.1:5432/fleet_bench_events'),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
});

const DEVICES = 1000;
/**
 * Connections the paced load spreads its requests over: autocannon paces each at the rate's share, so each
 * must have its answer back within 200 ms at 1,000 a second, or the rate is not reached.
 */
const CONNECTIONS = 200;

async function main(): Promise<void> {
  const env = loadConfig(eventsEnv);
  const base = await freePortRun(4);
  const [port, tripMetrics, groupMetrics, eventMetrics] = [base, base + 1, base + 2, base + 3];
  const run = `ev${Date.now().toString(36)}`;
  const stack = await startPacedStack('events', port, env.BENCH_DATABASE_URL, {
    TRIP_WRITER_METRICS_PORT: String(tripMetrics),
    GROUP_WRITER_METRICS_PORT: String(groupMetrics),
    EVENT_PROCESSOR_METRICS_PORT: String(eventMetrics),
    TELTONIKA_PORT: '0',
  });
  const pool = new Pool({ connectionString: env.BENCH_DATABASE_URL, max: 2 });
  try {
    const { gatewayUrl, jwtSecret } = stack;
    const token = await benchToken('events-bench', jwtSecret);
    let sequence = 0;
    const startMs = Date.now() - 60 * 60_000;
    const request: LoadRequest = {
      method: 'POST',
      path: '/fleet/api/v1/trip-location',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: () => {
        sequence += 1;
        const round = Math.floor(sequence / DEVICES);
        return JSON.stringify({
          imei: `${run}${sequence % DEVICES}`,
          // Each device's positions a second apart in its own time, so none is late.
          gpsTime: new Date(startMs + round * 1000).toISOString(),
          latitude: 52.52,
          longitude: 13.4,
          speed: 30,
          ignition: round % 2 === 0,
        });
      },
    };
    const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
    log('warming the write path and the processor up for 10 s at 200 creates a second');
    await load(gatewayUrl, request, CONNECTIONS, 10, 200);
    const warmed = sequence;

    const processor = listenerPid(eventMetrics);
    if (processor === null) throw new Error('the event processor was not found on its metrics port');
    const cpuBefore = processCpuSeconds(processor)!;
    const windowStart = Date.now();
    log(`${env.BENCH_EVENTS_RATE} creates a second for ${env.BENCH_EVENTS_SECONDS} s`);
    // autocannon, paced: a load generator light enough to leave the two cores to the stack.
    const { result: paced } = await load(gatewayUrl, request, CONNECTIONS, env.BENCH_EVENTS_SECONDS, env.BENCH_EVENTS_RATE);
    const posted = sequence - warmed;
    // Every position of the window has raised its event once the count stops growing.
    let events = -1;
    for (let stable = 0; stable < 3;) {
      await sleep(1000);
      const { rows } = await pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM events WHERE imei LIKE $1 AND created_at >= to_timestamp($2 / 1000.0)',
        [`${run}%`, windowStart],
      );
      const now = Number(rows[0]!.n);
      stable = now === events ? stable + 1 : 0;
      events = now;
    }
    const cpu = processCpuSeconds(processor)! - cpuBefore;
    const { rows } = await pool.query<{ p50: number; p99: number; max: number; first: Date; last: Date }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY d) AS p99,
              max(d) AS max, min(created_at) AS first, max(created_at) AS last
       FROM (SELECT e.created_at, extract(epoch FROM e.created_at - t.received_at)::float8 * 1000 AS d
             FROM events e JOIN trip_locations t ON t.id = e.position_id AND t.imei = e.imei
             WHERE e.imei LIKE $1 AND e.created_at >= to_timestamp($2 / 1000.0)) delays`,
      [`${run}%`, windowStart],
    );
    const figures = rows[0]!;
    const spanSeconds = Math.max(1, (figures.last.getTime() - figures.first.getTime()) / 1000);
    const result: EventsRun = {
      startedAt: new Date(windowStart).toISOString(),
      rate: env.BENCH_EVENTS_RATE,
      answeredRate: paced.requests.total / env.BENCH_EVENTS_SECONDS,
      positions: posted,
      events,
      eventsPerSecond: events / spanSeconds,
      delay: { p50: figures.p50, p99: figures.p99, max: figures.max },
      processorCpu: { perPositionUs: (cpu * 1e6) / posted, core: cpu / ((Date.now() - windowStart) / 1000) },
      createLatency: { p50: paced.latency.p50, p99: paced.latency.p99 },
      failures: paced.errors + paced.timeouts + paced.non2xx,
    };
    saveResults({
      resultsDir: env.BENCH_RESULTS_DIR,
      file: 'events.json',
      results: result,
      section: EVENTS_SECTION,
      table: eventsTable(result),
    });
    const cost = await geofenceCost({ gatewayUrl, token, pool, processorPid: processor, log }, run);
    saveResults({
      resultsDir: env.BENCH_RESULTS_DIR,
      file: 'geofence-cost.json',
      results: cost,
      section: GEOFENCE_COST_SECTION,
      table: geofenceCostTable(cost),
    });
  } finally {
    await pool.end();
    await stack.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
  process.exit(1);
});

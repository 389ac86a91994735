// `npm run bench:quiet`: the quiet-fleet scenario alone, on a stack of its own (the launcher's, as `npm
// start` runs it, Teltonika listener and event processor included, on a broker of the bench's own whose
// requests it counts by API): the stack at rest and at 50, 150 and 500 paced creates a second, each
// process's CPU and the broker's requests, the fit of a fixed cost plus a cost per create, and the
// targets. Saved in bench/results/quiet-fleet.json and written into docs/performance.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { z } from 'zod';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { withSection } from './docs-section';
import { listenerPid, postgresPids } from './process-cpu';
import { startBenchKafka } from './bench-kafka';
import { fitQuietFleet, measureQuietFleet, QUIET_FLEET_RATES, QUIET_FLEET_SECTION, quietFleetTable } from './quiet-fleet';
import { freePortRun } from '@fleet/local-stack/local-ports';
import { startPacedStack } from './bench-stack';
import { repoRoot } from './load-driver';

const WARMUP_SECONDS = 40;

const quietEnv = z.object({
  BENCH_QUIET_SECONDS: positiveInt(20),
  BENCH_DATABASE_URL: z.string().default('postgres://root@127.0.0.1:5432/fleet_bench_quiet'),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
});

async function main(): Promise<void> {
  const env = loadConfig(quietEnv);
  // Six consecutive ports, free now and below the ephemeral range.
  const base = await freePortRun(6);
  const [port, tripMetrics, groupMetrics, teltonikaPort, teltonikaMetrics, eventMetrics] = [
    base,
    base + 1,
    base + 2,
    base + 3,
    base + 4,
    base + 5,
  ];
  const kafka = await startBenchKafka(1);
  const stack = await startPacedStack('quiet', port, env.BENCH_DATABASE_URL, {
    KAFKA_BROKERS: kafka.brokers,
    TRIP_WRITER_METRICS_PORT: String(tripMetrics),
    GROUP_WRITER_METRICS_PORT: String(groupMetrics),
    TELTONIKA_PORT: String(teltonikaPort),
    TELTONIKA_METRICS_PORT: String(teltonikaMetrics),
    EVENT_PROCESSOR_METRICS_PORT: String(eventMetrics),
  });
  try {
    const { gatewayUrl, jwtSecret } = stack;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('quiet-fleet')
      .setExpirationTime('2h')
      .sign(new TextEncoder().encode(jwtSecret));
    let sequence = 0;
    const request = {
      method: 'POST' as const,
      path: () => '/fleet/api/v1/trip-location',
      headers: () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' }),
      body: () => {
        sequence += 1;
        return JSON.stringify({
          imei: `q${process.pid}${sequence}`,
          gpsTime: new Date().toISOString(),
          latitude: -6.2,
          longitude: 106.8,
          speed: 40,
          ignition: true,
        });
      },
    };
    const pid = (found: number | null) => (found === null ? [] : [found]);
    const sources = {
      gateway: () => pid(listenerPid(port)),
      'trip-writer': () => pid(listenerPid(tripMetrics)),
      'group-writer': () => pid(listenerPid(groupMetrics)),
      teltonika: () => pid(listenerPid(teltonikaMetrics)),
      'event-processor': () => pid(listenerPid(eventMetrics)),
      broker: () => kafka.pids(),
      postgres: postgresPids,
    };
    const log = (line: string) => process.stderr.write(`${line}\n`);
    // The JIT compilers of the broker and the services, unmeasured: after 20 s at 100 creates a second the
    // broker's C2 compiler thread was still the busiest of its threads, and the 50-a-second step measured
    // it (the broker at 20% of a core there, 10% once warmed at the highest rate measured). A broker in
    // service has long since compiled its request path.
    const warmupRate = Math.max(...QUIET_FLEET_RATES);
    log(`bench: warming the write path up for ${WARMUP_SECONDS} s at ${warmupRate} creates a second`);
    await measureQuietFleet({ gatewayUrl, request, sources, seconds: WARMUP_SECONDS, settleSeconds: 0, rates: [warmupRate] });
    const steps = await measureQuietFleet({
      gatewayUrl,
      request,
      sources,
      seconds: env.BENCH_QUIET_SECONDS,
      brokerRequests: () => kafka.requestCounts(),
      log,
    });
    const report = { startedAt: new Date().toISOString(), steps, fit: fitQuietFleet(steps) };
    mkdirSync(env.BENCH_RESULTS_DIR, { recursive: true });
    writeFileSync(path.join(env.BENCH_RESULTS_DIR, 'quiet-fleet.json'), `${JSON.stringify(report, null, 2)}\n`);
    const table = quietFleetTable(report);
    if (path.resolve(env.BENCH_RESULTS_DIR) === path.join(repoRoot, 'bench', 'results')) {
      const doc = path.join(repoRoot, 'docs', 'performance.md');
      writeFileSync(doc, withSection(readFileSync(doc, 'utf8'), QUIET_FLEET_SECTION, table));
    }
    process.stdout.write(`\n${table}\n`);
  } finally {
    await stack.stop();
    await kafka.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
  process.exit(1);
});

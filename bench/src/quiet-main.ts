// `npm run bench:quiet`: the quiet-fleet scenario alone, on a stack of its own (the launcher's, as `npm
// start` runs it, Teltonika listener and event processor included, on a broker of the bench's own whose
// requests it counts by API): the stack at rest and at 50, 150 and 500 paced creates a second, each
// process's CPU and the broker's requests, the fit of a fixed cost plus a cost per create, the
// targets, and a bare express server's CPU per request at 50 a second as the host's yardstick. Saved
// in bench/results/quiet-fleet.json and written into docs/performance.md.
import path from 'node:path';
import { z } from 'zod';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { saveResults } from './docs-section';
import { postgresPids } from './process-cpu';
import {
  fitQuietFleet,
  measureQuietFleet,
  measureYardstick,
  QUIET_FLEET_RATES,
  QUIET_FLEET_SECTION,
  quietFleetTable,
  YARDSTICK_RATE,
} from './quiet-fleet';
import { startBenchKafka } from './bench-kafka';
import { startFleetStack } from './bench-stack';
import { repoRoot, startBaseline } from './load-driver';

const WARMUP_SECONDS = 40;

const quietEnv = z.object({
  BENCH_QUIET_SECONDS: positiveInt(20),
  BENCH_DATABASE_URL: z.string().default('postgres://root@127.0.0.1:5432/fleet_bench_quiet'),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
});

async function main(): Promise<void> {
  const env = loadConfig(quietEnv);
  const kafka = await startBenchKafka(1);
  const stack = await startFleetStack('quiet', env.BENCH_DATABASE_URL, kafka.brokers);
  try {
    const { gatewayUrl, uniqueCreate: request } = stack;
    const sources = { ...stack.services, broker: () => kafka.pids(), postgres: postgresPids };
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
    log(`bench: the host yardstick, a bare express server at ${YARDSTICK_RATE} requests a second`);
    const hello = await startBaseline('hello-world.js');
    const yardstick = await measureYardstick(hello, env.BENCH_QUIET_SECONDS).finally(() => hello.process.kill('SIGTERM'));
    const report = { startedAt: new Date().toISOString(), steps, fit: fitQuietFleet(steps), yardstick };
    const table = quietFleetTable(report);
    saveResults({ resultsDir: env.BENCH_RESULTS_DIR, file: 'quiet-fleet.json', results: report, section: QUIET_FLEET_SECTION, table });
  } finally {
    await stack.stop();
    await kafka.stop();
  }
}

main().catch((error: Error) => {
  process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
  process.exit(1);
});

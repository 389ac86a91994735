// `npm run bench`: runs the benchmark, prints the table, and saves the run under bench/results/.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { BENCH_HISTORY, BENCH_RESULTS, withSection } from './docs-section';
import { appendHistory, HISTORY_FILE, readHistory, runsTable } from './history';
import { markdownTable, svgChart } from './report';
import { repoRoot } from './load-driver';
import { dropBenchDatabase, runBench } from './run-bench';

const benchEnv = z.object({
  BENCH_CONNECTIONS: positiveInt(64),
  BENCH_SCALE_OUT_RATE: positiveInt(50),
  BENCH_DURATION_SECONDS: positiveInt(15),
  BENCH_WARMUP_SECONDS: z.coerce.number().check(integer()).min(0).default(3),
  BENCH_DATABASE_URL: z.string().default('postgres://root@127.0.0.1:5432/fleet_bench'),
  /** Target a running stack instead of starting one (its API key and JWT secret are then required). */
  BENCH_TARGET_URL: z.url().optional(),
  BENCH_API_KEY: z.string().optional(),
  BENCH_JWT_SECRET: z.string().optional(),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
  /** The positions generated in the database before the scenarios, spread evenly over the devices. */
  BENCH_VOLUME_POSITIONS: positiveInt(10_000_000),
  BENCH_VOLUME_DEVICES: positiveInt(10_000),
});

async function main(): Promise<void> {
  const env = loadConfig(benchEnv);
  const historyFile = path.join(env.BENCH_RESULTS_DIR, HISTORY_FILE);
  const report = await runBench({
    connections: env.BENCH_CONNECTIONS,
    scaleOutRate: env.BENCH_SCALE_OUT_RATE,
    durationSeconds: env.BENCH_DURATION_SECONDS,
    warmupSeconds: env.BENCH_WARMUP_SECONDS,
    databaseUrl: env.BENCH_DATABASE_URL,
    targetUrl: env.BENCH_TARGET_URL,
    apiKey: env.BENCH_API_KEY,
    jwtSecret: env.BENCH_JWT_SECRET,
    volume: { positions: env.BENCH_VOLUME_POSITIONS, devices: env.BENCH_VOLUME_DEVICES },
    history: readHistory(historyFile),
  });
  if (!env.BENCH_TARGET_URL) await dropBenchDatabase(env.BENCH_DATABASE_URL);

  mkdirSync(env.BENCH_RESULTS_DIR, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  writeFileSync(path.join(env.BENCH_RESULTS_DIR, `${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(env.BENCH_RESULTS_DIR, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(env.BENCH_RESULTS_DIR, 'latest.svg'), `${svgChart(report)}\n`);
  writeFileSync(path.join(env.BENCH_RESULTS_DIR, 'latest.md'), `${markdownTable(report)}\n`);
  appendHistory(historyFile, report);
  // The docs show the committed run; a run saved elsewhere leaves them as they are.
  if (path.resolve(env.BENCH_RESULTS_DIR) === path.join(repoRoot, 'bench', 'results')) {
    const performanceDoc = path.join(repoRoot, 'docs', 'performance.md');
    writeFileSync(performanceDoc, withSection(readFileSync(performanceDoc, 'utf8'), BENCH_RESULTS, markdownTable(report)));
    const historyDoc = path.join(repoRoot, 'docs', 'performance-history.md');
    writeFileSync(historyDoc, withSection(readFileSync(historyDoc, 'utf8'), BENCH_HISTORY, runsTable(readHistory(historyFile))));
  }
  process.stdout.write(`\n${markdownTable(report)}\n\nsaved in ${path.relative(process.cwd(), env.BENCH_RESULTS_DIR)}/\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`bench failed: ${error.message}\n`);
  process.exitCode = 1;
});

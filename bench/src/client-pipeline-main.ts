// `npm run bench:clients`: what the Kafka part of a trip create costs on each client the project could
// run on (pipeline-clients.ts), on one broker of the bench's own: each client in a process of its own,
// warmed up, then at rest and at paced rates, its process's CPU, the broker's CPU and the broker's
// requests by API at each step. Saved in bench/results/client-pipeline.json; docs/adr/0013-kafka-client.md
// reads it.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { z } from 'zod';
import { createKafka } from '@fleet/shared/kafka/client';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { createLogger } from '@fleet/shared/logger';
import { startBenchKafka, type BenchKafka } from './bench-kafka';
import type { PipelineStep, PipelineStepResult } from './client-pipeline';
import { requestsBetween, type RequestCounts } from './kafka-tools';
import { repoRoot } from './load-driver';
import { clientPipelineTable, PIPELINE_CLIENTS, type ClientStepFigures, type PipelineClientName } from './client-pipeline';
import { processCpuSeconds } from './process-cpu';

const clientsEnv = z.object({
  BENCH_CLIENTS_SECONDS: positiveInt(20),
  BENCH_CLIENTS_WARMUP_SECONDS: positiveInt(20),
  /** The clients measured, in this order: the broker warms up over the run, so compare runs in both orders. */
  BENCH_CLIENTS: z
    .string()
    .default(PIPELINE_CLIENTS.join(','))
    .transform((list) => list.split(',').map((name) => name.trim()))
    .pipe(z.array(z.enum(PIPELINE_CLIENTS)).min(1)),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
});

/** At rest, then the quiet-fleet scenario's low rates, where the cost per create is the question. */
const RATES = [0, 50, 150];
const WARMUP_RATE = 300;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function runClient(
  name: PipelineClientName,
  kafka: BenchKafka,
  seconds: number,
  warmupSeconds: number,
): Promise<ClientStepFigures[]> {
  const tag = name.replace(/[^a-z]/g, '');
  const topics = { commands: `bench-clients.${tag}.commands`, replies: `bench-clients.${tag}.replies` };
  const admin = createKafka({
    brokers: kafka.brokers.split(','),
    clientId: 'bench-clients',
    logger: createLogger('bench', 'warn'),
  }).admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: topics.commands, numPartitions: 12, replicationFactor: 1 },
      { topic: topics.replies, numPartitions: 24, replicationFactor: 1 },
    ],
  });
  await admin.disconnect();

  const child = fork(
    path.join(__dirname, 'client-pipeline-child.js'),
    [name, kafka.brokers, topics.commands, topics.replies, `bench-clients.${tag}`],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const next = async <T>(): Promise<T> => ((await once(child, 'message')) as [T])[0];
  const step = async (message: PipelineStep): Promise<PipelineStepResult> => {
    child.send(message);
    return await next<PipelineStepResult>();
  };
  try {
    await next<'ready'>();
    log(`bench: ${name}: warming up for ${warmupSeconds} s at ${WARMUP_RATE} a second`);
    await step({ ratePerSecond: WARMUP_RATE, seconds: warmupSeconds });
    const figures: ClientStepFigures[] = [];
    for (const ratePerSecond of RATES) {
      const before = snapshot(child, kafka);
      const result = await step({ ratePerSecond, seconds });
      const after = snapshot(child, kafka);
      const elapsed = (after.at - before.at) / 1000;
      const requests = requestsBetween(before.requests, after.requests);
      figures.push({
        client: name,
        ratePerSecond,
        clientCpu: (after.child - before.child) / elapsed,
        brokerCpu: (after.broker - before.broker) / elapsed,
        brokerRequests: requests && Object.fromEntries(Object.entries(requests).map(([api, count]) => [api, count / elapsed])),
        result,
      });
      log(`bench: ${name} at ${ratePerSecond}/s: ${JSON.stringify(figures.at(-1))}`);
    }
    return figures;
  } finally {
    child.send('stop');
    await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    child.kill('SIGKILL');
  }
}

function snapshot(child: ChildProcess, kafka: BenchKafka): { at: number; child: number; broker: number; requests: RequestCounts | null } {
  const seconds = (pid: number | undefined) => (pid === undefined ? 0 : (processCpuSeconds(pid) ?? 0));
  return {
    at: performance.now(),
    child: seconds(child.pid),
    broker: kafka.pids().reduce((sum, pid) => sum + seconds(pid), 0),
    requests: kafka.requestCounts(),
  };
}

async function main(): Promise<void> {
  const env = loadConfig(clientsEnv);
  const kafka = await startBenchKafka(1);
  try {
    const figures: ClientStepFigures[] = [];
    for (const name of env.BENCH_CLIENTS)
      figures.push(...(await runClient(name, kafka, env.BENCH_CLIENTS_SECONDS, env.BENCH_CLIENTS_WARMUP_SECONDS)));
    const report = { startedAt: new Date().toISOString(), seconds: env.BENCH_CLIENTS_SECONDS, figures };
    mkdirSync(env.BENCH_RESULTS_DIR, { recursive: true });
    writeFileSync(path.join(env.BENCH_RESULTS_DIR, 'client-pipeline.json'), `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${clientPipelineTable(figures)}\n`);
  } finally {
    await kafka.stop();
  }
}

if (require.main === module) {
  main().catch((error: Error) => {
    process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}

// `npm run bench:replication`: what replication costs, measured honestly. For one Kafka node and then
// three (three replicas, min.insync.replicas 2, as production runs), on nodes of the bench's own: the
// nodes idle with no client, Kafka's own producer paced at each rate, then the stack as `npm start` runs
// it on those nodes, at rest and at the same paced rates of trip creates; each process's CPU, the
// nodes' requests by API, and the fits the capacity plan is drawn from (replication.ts). Saved in
// bench/results/replication.json and written into docs/performance.md.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { loadConfig, positiveInt } from '@fleet/shared/config';
import { createKafka } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import { startBenchKafka, type BenchKafka } from './bench-kafka';
import { startFleetStack } from './bench-stack';
import { saveResults } from './docs-section';
import { producerPerformance } from './kafka-tools';
import { drive, repoRoot } from './load-driver';
import { postgresPids, processCpuSeconds } from './process-cpu';
import { fitQuietFleet, measureQuietFleet, type QuietFleetStep } from './quiet-fleet';
import {
  partFits,
  REPLICATION_RATES,
  REPLICATION_SECTION,
  replicationTable,
  type KafkaProducerStep,
  type ReplicationReport,
  type ReplicationShape,
  type SystemStep,
} from './replication';

const replicationEnv = z.object({
  BENCH_REPLICATION_SECONDS: positiveInt(20),
  /**
   * Fresh JVMs are warmed this long at the highest rate, by Kafka's producer and then by the stack, before
   * anything counts: until their JIT compilers are done, those are the busiest threads of a broker.
   */
  BENCH_REPLICATION_WARMUP_SECONDS: positiveInt(30),
  /** Comma-separated creates a second of each step; the three rates by default. */
  BENCH_REPLICATION_RATES: z
    .string()
    .default(REPLICATION_RATES.join(','))
    .transform((value) => value.split(',').map(Number))
    .pipe(z.array(z.number().int().positive()).min(2)),
  /** 1, 3 or both (1,3). */
  BENCH_REPLICATION_NODES: z
    .string()
    .default('1,3')
    .transform((value) => value.split(',').map(Number))
    .pipe(z.array(z.union([z.literal(1), z.literal(3)])).min(1)),
  BENCH_DATABASE_URL: z.string().default('postgres://root@127.0.0.1:5432/fleet_bench_replication'),
  BENCH_RESULTS_DIR: z.string().default(path.join(repoRoot, 'bench', 'results')),
});

const SETTLE_SECONDS = 5;
const PERF_TOPIC = 'bench.producer-performance';

const log = (line: string) => process.stderr.write(`${line}\n`);
const cpuOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + (processCpuSeconds(pid) ?? 0), 0);

/**
 * The yardstick's topic, as the system's topics are provisioned on these nodes: 12 partitions, every node
 * a replica; resolves once each partition has a leader. A cluster just up may not yet know a topic it
 * has created, so its answers are asked again until they agree, for up to 60 s.
 */
async function createPerfTopic(kafka: BenchKafka): Promise<void> {
  const admin = createKafka({
    brokers: kafka.brokers.split(','),
    clientId: 'fleet-bench',
    logger: createLogger('bench', 'silent'),
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: false, topics: [{ topic: PERF_TOPIC, numPartitions: 12, replicationFactor: kafka.nodes }] });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const led = await admin
        .fetchTopicMetadata({ topics: [PERF_TOPIC] })
        .then(({ topics }) => topics[0]?.partitions.length === 12 && topics[0].partitions.every((partition) => partition.leader >= 0))
        .catch(() => false);
      if (led) return;
      if (Date.now() > deadline) throw new Error(`${PERF_TOPIC} has no leader for every partition after 60 s`);
      await sleep(500);
    }
  } finally {
    await admin.disconnect();
  }
}

async function kafkaProducerSteps(kafka: BenchKafka, rates: readonly number[], seconds: number, warmupSeconds: number) {
  log(`bench: ${kafka.nodes} node(s): warming Kafka's producer up for ${warmupSeconds} s`);
  await producerPerformance({ brokers: kafka.brokers, topic: PERF_TOPIC, recordsPerSecond: Math.max(...rates), seconds: warmupSeconds });
  const steps: KafkaProducerStep[] = [];
  for (const rate of rates) {
    await sleep(SETTLE_SECONDS * 1000);
    const before = cpuOf(kafka.pids());
    const startedAt = performance.now();
    const result = await producerPerformance({ brokers: kafka.brokers, topic: PERF_TOPIC, recordsPerSecond: rate, seconds });
    const elapsed = (performance.now() - startedAt) / 1000;
    const brokerSeconds = cpuOf(kafka.pids()) - before;
    const step = {
      rate,
      recordsPerSecond: result.recordsPerSecond,
      records: result.records,
      p99Ms: result.p99Ms,
      brokerMicrosPerRecord: (brokerSeconds * 1e6) / result.records,
      brokerCores: brokerSeconds / elapsed,
    };
    log(
      `  Kafka's producer at ${rate}/s: ${Math.round(step.recordsPerSecond)} records/s, ${Math.round(step.brokerMicrosPerRecord)} µs of broker CPU a record`,
    );
    steps.push(step);
  }
  return steps;
}

/** A step of the quiet-fleet loop, in the replication report's terms: per create answered. */
function systemStep(step: QuietFleetStep): SystemStep {
  const perCreate = (cores: number) => (step.answered === 0 ? 0 : (cores * step.seconds * 1e6) / step.answered);
  const requests = step.brokerRequestsPerSecond;
  return {
    rate: step.rate,
    createsPerSecond: step.answered / step.seconds,
    errors: step.errors,
    p99Ms: step.p99Ms ?? 0,
    cores: step.cores,
    totalCores: step.totalCores,
    brokerMicrosPerCreate: perCreate(step.cores.broker ?? 0),
    totalMicrosPerCreate: perCreate(step.totalCores),
    requestsPerCreate:
      requests == null || step.answered === 0
        ? null
        : Object.fromEntries(Object.entries(requests).map(([api, perSecond]) => [api, (perSecond * step.seconds) / step.answered])),
  };
}

async function measureShape(nodes: 1 | 3, env: z.infer<typeof replicationEnv>): Promise<ReplicationShape> {
  const seconds = env.BENCH_REPLICATION_SECONDS;
  const kafka = await startBenchKafka(nodes);
  try {
    await createPerfTopic(kafka);
    await sleep(SETTLE_SECONDS * 1000);
    const idleBefore = cpuOf(kafka.pids());
    await sleep(seconds * 1000);
    const idleBrokerCores = (cpuOf(kafka.pids()) - idleBefore) / seconds;
    log(`bench: ${nodes} node(s) with no client: ${(idleBrokerCores * 100).toFixed(1)}% of a core`);
    const kafkaSteps = await kafkaProducerSteps(kafka, env.BENCH_REPLICATION_RATES, seconds, env.BENCH_REPLICATION_WARMUP_SECONDS);

    const stack = await startFleetStack(`replication${nodes}`, env.BENCH_DATABASE_URL, kafka.brokers);
    try {
      const request = stack.uniqueCreate;
      const sources = { ...stack.services, broker: () => kafka.pids(), postgres: postgresPids };
      const warmup = env.BENCH_REPLICATION_WARMUP_SECONDS;
      const warmupRate = Math.max(...env.BENCH_REPLICATION_RATES);
      log(`bench: ${nodes} node(s): warming the stack up for ${warmup} s at ${warmupRate} creates a second`);
      await drive(stack.gatewayUrl, request, { ratePerUrl: warmupRate }, warmup);

      // The stack at rest, then at each rate, measured as the quiet-fleet scenario measures it.
      const [rest, ...steps] = await measureQuietFleet({
        gatewayUrl: stack.gatewayUrl,
        request,
        sources,
        seconds,
        settleSeconds: SETTLE_SECONDS,
        rates: [0, ...env.BENCH_REPLICATION_RATES],
        brokerRequests: () => kafka.requestCounts(),
      });
      const restCores = rest!.cores;
      const restRequestsPerSecond = rest!.brokerRequestsPerSecond ?? null;
      const system = steps.map(systemStep);
      for (const step of system) {
        log(
          `  the system at ${step.rate}/s: ${Math.round(step.createsPerSecond)} creates/s answered, ${Math.round(step.brokerMicrosPerCreate)} µs ` +
            `of broker CPU a create, ${Math.round(step.totalMicrosPerCreate)} µs in all, p99 ${step.p99Ms} ms, ${step.errors} errors`,
        );
      }
      return {
        nodes,
        idleBrokerCores,
        restCores,
        restRequestsPerSecond,
        kafka: kafkaSteps,
        system,
        kafkaBrokerFit: fitQuietFleet(kafkaSteps.map((step) => ({ rate: step.recordsPerSecond, totalCores: step.brokerCores }))),
        systemBrokerFit: fitQuietFleet(system.map((step) => ({ rate: step.createsPerSecond, totalCores: step.cores.broker ?? 0 }))),
        systemFit: fitQuietFleet(system.map((step) => ({ rate: step.createsPerSecond, totalCores: step.totalCores }))),
        partFits: partFits(system),
      };
    } finally {
      await stack.stop();
    }
  } finally {
    await kafka.stop();
  }
}

async function main(): Promise<void> {
  const env = loadConfig(replicationEnv);
  const report: ReplicationReport = { startedAt: new Date().toISOString(), secondsPerStep: env.BENCH_REPLICATION_SECONDS, shapes: [] };
  for (const nodes of env.BENCH_REPLICATION_NODES) report.shapes.push(await measureShape(nodes, env));
  const table = replicationTable(report);
  saveResults({ resultsDir: env.BENCH_RESULTS_DIR, file: 'replication.json', results: report, section: REPLICATION_SECTION, table });
}

main().catch((error: Error) => {
  process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
  process.exit(1);
});

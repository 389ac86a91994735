// `npm run kafka:up` / `npm run kafka:down`: the development Apache Kafka on 127.0.0.1:${KAFKA_PORT:-9092},
// its data in .dev/kafka/ (kept across restarts); with KAFKA_BROKER_COUNT=3, a replicated cluster of three
// nodes on KAFKA_PORT, +1 and +2. `up` is idempotent (it starts whatever is not running) and prints
// KAFKA_BROKERS=... last; `down` stops the single node and the cluster's nodes alike.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, loadConfig } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { defaultDataDir, javaToolsPresent, JAVA_TOOLS_HINT, startLocalKafka, stopLocalKafka } from './apache-kafka';
import { localKafkaCluster } from './kafka-cluster';

const cliEnv = z.object({
  KAFKA_PORT: z.coerce.number().check(integer()).min(1).max(65530).default(9092),
  /** 1: the single development node; 3: the replicated cluster production's shape. */
  KAFKA_BROKER_COUNT: z.enum(['1', '3']).default('1').transform(Number),
});

async function main(): Promise<void> {
  const { positionals } = parseArgs({ allowPositionals: true });
  const command = positionals[0];
  if (command === 'down') {
    const stopped = await stopLocalKafka(defaultDataDir);
    const { KAFKA_PORT } = loadConfig(cliEnv);
    await localKafkaCluster({ dataDir: defaultDataDir, port: KAFKA_PORT }).down();
    console.log(stopped ? 'Apache Kafka stopped' : 'Apache Kafka was not running');
    return;
  }
  if (command !== 'up') throw new ConfigError('usage: kafka-cli up|down');
  const { KAFKA_PORT, KAFKA_BROKER_COUNT } = loadConfig(cliEnv);
  if (!javaToolsPresent()) throw new ConfigError(JAVA_TOOLS_HINT);
  if (KAFKA_BROKER_COUNT === 3) {
    const cluster = localKafkaCluster({ dataDir: defaultDataDir, port: KAFKA_PORT });
    await cluster.up();
    console.log(
      `Apache Kafka: ${cluster.nodes.length} nodes running (pids in .dev/kafka/broker-<node id>.pid, data in .dev/kafka/node-<node id>/)`,
    );
    console.log(`KAFKA_BROKERS=${cluster.brokers.join(',')}`);
    return;
  }
  const kafka = await startLocalKafka({ dataDir: defaultDataDir, port: KAFKA_PORT });
  console.log(`Apache Kafka ${kafka.version} ${kafka.startedHere ? 'started' : 'already running'} (pid ${kafka.pid}, data in .dev/kafka/)`);
  console.log(`KAFKA_BROKERS=${kafka.brokers.join(',')}`);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exitCode = 1;
});

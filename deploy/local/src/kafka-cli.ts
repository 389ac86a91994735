// `npm run kafka:up` / `npm run kafka:down`: the development Apache Kafka on 127.0.0.1:${KAFKA_PORT:-9092},
// its data in .dev/kafka/ (kept across restarts). `up` is idempotent and prints KAFKA_BROKERS=... last.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, integer, loadConfig } from '@fleet/shared';
import { defaultDataDir, javaToolsPresent, JAVA_TOOLS_HINT, startLocalKafka, stopLocalKafka } from './apache-kafka';

const cliEnv = z.object({ KAFKA_PORT: z.coerce.number().check(integer()).min(1).max(65534).default(9092) });

async function main(): Promise<void> {
  const { positionals } = parseArgs({ allowPositionals: true });
  const command = positionals[0];
  if (command === 'down') {
    const stopped = await stopLocalKafka(defaultDataDir);
    console.log(stopped ? 'Apache Kafka stopped' : 'Apache Kafka was not running');
    return;
  }
  if (command !== 'up') throw new ConfigError('usage: kafka-cli up|down');
  const { KAFKA_PORT } = loadConfig(cliEnv);
  if (!javaToolsPresent()) throw new ConfigError(JAVA_TOOLS_HINT);
  const kafka = await startLocalKafka({ dataDir: defaultDataDir, port: KAFKA_PORT });
  console.log(`Apache Kafka ${kafka.version} ${kafka.startedHere ? 'started' : 'already running'} (pid ${kafka.pid}, data in .dev/kafka/)`);
  console.log(`KAFKA_BROKERS=${kafka.brokers.join(',')}`);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exitCode = 1;
});

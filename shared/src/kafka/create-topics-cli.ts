// `node shared/dist/kafka/create-topics-cli.js`: creates or grows the project's Kafka topics (the table in
// kafka/topics.ts) and exits. docker-compose's `init` service and the Kubernetes `fleet-create-topics` Job
// run it; `npm start` and the tests call the same ensureTopics. Safe to run again.
import { createKafka } from './client';
import { ensureTopics } from './topics';
import { createLogger } from '../logger';
import { createTopicsConfig } from './create-topics-config';

async function main(): Promise<void> {
  const config = createTopicsConfig();
  const logger = createLogger('create-topics', config.LOG_LEVEL);
  const admin = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'fleet-create-topics', logger }).admin();
  try {
    await admin.connect();
    const topics = await ensureTopics(admin, { prefix: config.KAFKA_TOPIC_PREFIX, replicationFactor: config.TOPIC_REPLICATION_FACTOR });
    for (const topic of topics) logger.info({ ...topic, replicationFactor: config.TOPIC_REPLICATION_FACTOR }, `topic ${topic.topic} ready`);
  } catch (error) {
    logger.fatal(`cannot provision the topics on ${config.KAFKA_BROKERS.join(',')}: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await admin.disconnect();
  }
}

void main();

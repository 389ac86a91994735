// What the create-topics CLI reads from its environment, apart from the CLI so that the deployment
// tests can check compose's `init` service and the Kubernetes Job against it without running it.
import { z } from 'zod';
import { kafkaBrokers, loadConfig, logLevel, positiveInt, topicPrefix } from '../config';

const createTopicsEnv = z.object({
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_TOPIC_PREFIX: topicPrefix,
  /** At most the number of brokers; three in production, so a write survives one broker being down. */
  TOPIC_REPLICATION_FACTOR: positiveInt(1),
  LOG_LEVEL: logLevel,
});

export type CreateTopicsConfig = z.output<typeof createTopicsEnv>;

/** Every variable the CLI reads, so that the deployment files can be checked against it. */
export const createTopicsEnvNames = Object.keys(createTopicsEnv.shape);

export function createTopicsConfig(env: NodeJS.ProcessEnv = process.env): CreateTopicsConfig {
  return loadConfig(createTopicsEnv, env);
}

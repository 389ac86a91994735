// What the trip-writer and the group-writer have in common: configuration, a PostgreSQL pool and a
// command consumer in a consumer group, and its metrics on a port of its own. Each writer supplies its
// topic, its schema and its store.
import type { Pool } from 'pg';
import { z } from 'zod';
import { commonEnv, loadConfig, optionalString, positiveInt } from './config';
import { createPool, redactUrl } from './db/pool';
import { isDataRefusal } from './db/refusal';
import { createKafka } from './kafka/client';
import { startCommandConsumer, type DecodedCommand, type StoredCommand } from './kafka/command-consumer';
import { topicsFor, type Topics } from './kafka/topics';
import type { Logger } from './logger';
import { createMetricsRegistry, createWriterMetrics, serveMetrics, type MetricsServer } from './metrics';

const writerEnv = z.object({
  ...commonEnv,
  /** Partitions this instance writes at once; each takes a database connection. */
  WRITER_CONCURRENCY: positiveInt(4),
  WRITER_GROUP_ID: optionalString,
  /**
   * How long the group waits for a silent writer before handing its partitions to the others, i.e. how
   * long a crashed writer's partitions stand still. Brokers refuse less than 6 s by default.
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6000).max(300_000).default(30_000),
  /** Where GET /metrics is served; 0 picks a free port (tests). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
});

export type WriterConfig = z.output<typeof writerEnv>;

/** Every variable a writer reads, so that the deployment files can be checked against it. */
export const writerEnvNames = Object.keys(writerEnv.shape);

export function writerConfig(env: NodeJS.ProcessEnv = process.env): WriterConfig {
  return loadConfig(writerEnv, env);
}

export interface WriterDefinition<S extends z.ZodTypeAny> {
  /** Service name, also the default consumer group. */
  name: string;
  topic: (topics: Topics) => string;
  schema: S;
  store: (pool: Pool, batch: Array<DecodedCommand<z.output<S>>>) => Promise<StoredCommand[]>;
}

export interface RunningWriter {
  /** The port GET /metrics is served on. */
  metricsPort: number;
  stop(): Promise<void>;
}

export async function startWriter<S extends z.ZodTypeAny>(
  definition: WriterDefinition<S>,
  config: WriterConfig,
  logger: Logger,
): Promise<RunningWriter> {
  const pool = createPool(
    {
      connectionString: config.DATABASE_URL,
      max: Math.max(config.DATABASE_POOL_SIZE, config.WRITER_CONCURRENCY),
      applicationName: `fleet-${definition.name}`,
    },
    logger,
  );
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end();
    throw new Error(`PostgreSQL is unreachable at ${redactUrl(config.DATABASE_URL)}: ${(error as Error).message}`);
  }

  const registry = createMetricsRegistry(definition.name);
  let metricsServer: MetricsServer;
  try {
    metricsServer = await serveMetrics(registry, config.METRICS_PORT);
  } catch (error) {
    await pool.end();
    throw new Error(`cannot serve metrics on METRICS_PORT=${config.METRICS_PORT}: ${(error as Error).message}`);
  }

  const topics = topicsFor(config.KAFKA_TOPIC_PREFIX);
  const topic = definition.topic(topics);
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: `fleet-${definition.name}`, logger });
  const groupId = config.WRITER_GROUP_ID ?? `${config.KAFKA_TOPIC_PREFIX}.${definition.name}`;
  let consumer;
  try {
    consumer = await startCommandConsumer({
      kafka,
      topics,
      topic,
      groupId,
      schema: definition.schema,
      logger,
      concurrency: config.WRITER_CONCURRENCY,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      isRefusal: isDataRefusal,
      store: (batch) => definition.store(pool, batch),
      metrics: createWriterMetrics(registry),
    });
  } catch (error) {
    await Promise.allSettled([pool.end(), metricsServer.close()]);
    throw new Error(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}: ${(error as Error).message}`);
  }
  logger.info({ topic, groupId, metricsPort: metricsServer.port }, `${definition.name} consuming`);

  return {
    metricsPort: metricsServer.port,
    async stop() {
      await consumer.stop();
      await pool.end();
      // Last, so the counters of the final batch can still be scraped while the consumer drains.
      await metricsServer.close();
      logger.info(`${definition.name} stopped`);
    },
  };
}

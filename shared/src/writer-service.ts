// What the trip-writer and the group-writer have in common: configuration, a PostgreSQL pool and a
// command consumer in a consumer group. Each writer supplies its topic, its schema and its store.
import type { Pool } from 'pg';
import { z } from 'zod';
import { commonEnv, loadConfig, optionalString, positiveInt } from './config';
import { createPool, redactUrl } from './db/pool';
import { createKafka } from './kafka/client';
import { startCommandConsumer, type DecodedCommand, type StoredCommand } from './kafka/command-consumer';
import { topicsFor, type Topics } from './kafka/topics';
import type { Logger } from './logger';

const writerEnv = z.object({
  ...commonEnv,
  /** Partitions this instance writes at once; each takes a database connection. */
  WRITER_CONCURRENCY: positiveInt(2),
  WRITER_GROUP_ID: optionalString,
});

export type WriterConfig = z.output<typeof writerEnv>;

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
      store: (batch) => definition.store(pool, batch),
    });
  } catch (error) {
    await pool.end();
    throw new Error(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}: ${(error as Error).message}`);
  }
  logger.info({ topic, groupId }, `${definition.name} consuming`);

  return {
    async stop() {
      await consumer.stop();
      await pool.end();
      logger.info(`${definition.name} stopped`);
    },
  };
}

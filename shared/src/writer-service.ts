// The process mechanism the trip-writer and the group-writer share: their configuration, a PostgreSQL
// pool, a command consumer in a consumer group, and its metrics on a port of its own. What a writer does
// with its commands (decode, store, answer) is its own: each service supplies its topic and handler, and
// any upkeep of its own tables that runs beside the consumer.
import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { commonEnv, loadConfig, optionalString, positiveInt } from './config';
import { connectPool } from './db/pool';
import { isDataRefusal, isStatementFailure } from './db/pg-errors';
import { createKafka, kafkaClientSettings } from './kafka/client';
import { startCommandConsumer, type CommandHandler } from './kafka/command-consumer';
import { AdminClient } from './kafka/admin-client';
import { registerConsumerLag } from './kafka/consumer-lag';
import { missingTopics, missingTopicsMessage } from './kafka/topic-check';
import { TopicLayout } from './kafka/topic-layout';
import { topicsFor, type Topics } from './kafka/topics';
import type { Logger } from './logger';
import { createKafkaOutageMetrics } from './kafka/client-outage';
import { createMetricsRegistry, createWriterMetrics, serveMetrics, type MetricsServer } from './metrics';
import { integer } from './schemas/checks';

/** What every writer reads; a writer that reads more extends it (the trip-writer its partitions, the group-writer its key lifetime). */
export const writerEnv = z.object({
  ...commonEnv,
  /**
   * Partitions whose batches this instance handles at once. Those handled together are stored with one
   * INSERT and answered with one produce, so the default takes every partition of the trip topic.
   */
  WRITER_CONCURRENCY: positiveInt(12),
  WRITER_GROUP_ID: optionalString,
  /**
   * How long the group waits for a silent writer before handing its partitions to the others, i.e. how
   * long a crashed writer's partitions stand still and its devices' writes go unconfirmed. The broker's
   * minimum (6 s) by default, with a heartbeat every 2 s (docs/adr/0008-writer-session-timeout.md).
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().check(integer()).min(6000).max(300_000).default(6000),
  /** Where GET /metrics is served; 0 picks a free port (tests). */
  METRICS_PORT: z.coerce.number().check(integer()).min(0).max(65535).default(9464),
});

export type WriterConfig = z.output<typeof writerEnv>;

/** Every variable a writer reads, so that the deployment files can be checked against it. */
export const writerEnvNames = Object.keys(writerEnv.shape);

export function writerConfig(env: NodeJS.ProcessEnv = process.env): WriterConfig {
  return loadConfig(writerEnv, env);
}

/** What a writer's own parts are given: the pool, the registry its /metrics serves, its logger. */
export interface WriterContext {
  pool: Pool;
  registry: Registry;
  logger: Logger;
}

/** Work a writer does beside its commands, e.g. creating tomorrow's partitions. */
export interface WriterUpkeep {
  /** Stops it, waiting for a run in progress. */
  stop(): Promise<void>;
}

export interface WriterDefinition<S extends z.ZodType> {
  /** Service name, also the default consumer group. */
  name: string;
  topic: (topics: Topics) => string;
  /**
   * The writer's handler of a batch of commands, storing through the pool. `published` holds the
   * partitions of the topics it announces on, as the broker reported them (at start, and again whenever
   * a leader fails).
   */
  consume: (pool: Pool, context: WriterContext & { published: TopicLayout }) => CommandHandler<S>;
  /** Started once the database answers and before the first command is consumed; stopped after the last. */
  upkeep?: (context: WriterContext) => Promise<WriterUpkeep>;
}

export interface RunningWriter {
  /** The port GET /metrics is served on. */
  metricsPort: number;
  stop(): Promise<void>;
}

export async function startWriter<S extends z.ZodType>(
  definition: WriterDefinition<S>,
  config: WriterConfig,
  logger: Logger,
): Promise<RunningWriter> {
  const pool = await connectPool(config, definition.name, logger);

  const registry = createMetricsRegistry(definition.name);
  let metricsServer: MetricsServer;
  try {
    metricsServer = await serveMetrics(registry, config.METRICS_PORT);
  } catch (error) {
    await pool.end();
    throw new Error(`cannot serve metrics on METRICS_PORT=${config.METRICS_PORT}: ${(error as Error).message}`, { cause: error });
  }

  const context: WriterContext = { pool, registry, logger };
  let upkeep: WriterUpkeep | undefined;
  try {
    upkeep = await definition.upkeep?.(context);
  } catch (error) {
    await Promise.allSettled([pool.end(), metricsServer.close()]);
    throw error;
  }

  const topics = topicsFor(config.KAFKA_TOPIC_PREFIX);
  const topic = definition.topic(topics);
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `fleet-${definition.name}`,
    logger,
    outages: createKafkaOutageMetrics(registry),
  });
  const groupId = config.WRITER_GROUP_ID ?? `${config.KAFKA_TOPIC_PREFIX}.${definition.name}`;
  const adminClient = new AdminClient(kafka.admin());
  let missing: string[] = [];
  let consumer;
  try {
    await adminClient.connect();
    // The trip-writer announces committed positions on topics.positions in the produce of its replies.
    missing = await adminClient.ask((admin) => missingTopics(admin, [topic, topics.replies, topics.deadLetter, topics.positions]));
    if (missing.length > 0) throw new Error(missingTopicsMessage(missing));
    // The partitions of the topics the writer sends to, and their leaders, asked for again when a leader fails.
    const published = new TopicLayout();
    const describePublished = async () =>
      published.update(
        (await adminClient.ask((admin) => admin.fetchTopicMetadata({ topics: [topics.replies, topics.deadLetter, topics.positions] })))
          .topics,
      );
    await describePublished();
    consumer = await startCommandConsumer({
      kafka,
      topics,
      topic,
      groupId,
      handler: definition.consume(pool, { ...context, published }),
      logger,
      concurrency: config.WRITER_CONCURRENCY,
      settings: { ...kafkaClientSettings(config), sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS },
      leaders: { layout: published, refresh: describePublished },
      isRefusal: isDataRefusal,
      isStatementFailure,
      metrics: createWriterMetrics(registry),
    });
  } catch (error) {
    await upkeep?.stop();
    await Promise.allSettled([pool.end(), metricsServer.close(), adminClient.close()]);
    const cause = (error as Error).message;
    throw new Error(missing.length > 0 ? cause : `Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}: ${cause}`, { cause: error });
  }
  // An admin client of its own: a scrape must never wait behind the consumer's fetches.
  registerConsumerLag(registry, adminClient, { groupId, topic });
  logger.info({ topic, groupId, metricsPort: metricsServer.port }, `${definition.name} consuming`);

  return {
    metricsPort: metricsServer.port,
    async stop() {
      await consumer.stop();
      await upkeep?.stop();
      await Promise.allSettled([pool.end(), adminClient.close()]);
      // Last, so the counters of the final batch can still be scraped while the consumer drains.
      await metricsServer.close();
      logger.info(`${definition.name} stopped`);
    },
  };
}

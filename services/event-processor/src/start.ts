// The event processor: a member of its consumer group on the committed positions (<prefix>.positions,
// keyed by IMEI, so each device's positions reach one member in order), turning them into events
// (process-positions.ts), marking silent devices offline, and delivering events to webhooks.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EachBatchPayload } from 'kafkajs';
import { startChore } from '@fleet/shared/chore';
import { connectPool } from '@fleet/shared/db/pool';
import { createKafka, consumerConfig, kafkaClientSettings } from '@fleet/shared/kafka/client';
import { createKafkaOutageMetrics } from '@fleet/shared/kafka/client-outage';
import { AdminClient } from '@fleet/shared/kafka/admin-client';
import { registerConsumerLag } from '@fleet/shared/kafka/consumer-lag';
import { OffsetCommitter } from '@fleet/shared/kafka/offset-committer';
import { superviseConsumer } from '@fleet/shared/kafka/supervised-consumer';
import { missingTopics, missingTopicsMessage } from '@fleet/shared/kafka/topic-check';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { createMetricsRegistry, serveMetrics } from '@fleet/shared/metrics';
import type { EventProcessorConfig } from './config';
import { sweepOffline } from './event-store';
import { createEventMetrics } from './metrics';
import { decodePositions, positionProcessor } from './process-positions';
import { startWebhookDelivery } from './webhook-delivery';

export { eventProcessorConfig, eventProcessorEnvNames, type EventProcessorConfig } from './config';

/**
 * Partitions handled at once: every partition of the topic's 12, so that the batches one fetch brings
 * are stored in one transaction (process-positions.ts) rather than one each.
 */
const CONCURRENCY = 12;
/**
 * Bytes a fetch waits for, up to KAFKA_FETCH_MAX_WAIT_MS: a batch is a transaction of some ten statements
 * whatever it holds, so under load the processor takes a few hundred positions at a time (each announced
 * position is some 300 bytes) rather than the one or two that trickled in since its last fetch. Events come
 * at most the wait later; at rest it changes nothing.
 */
const FETCH_MIN_BYTES = 64 * 1024;
/**
 * Offsets are committed on this timer, not per batch: a redelivered position raises nothing again. Not
 * by kafkajs's autoCommit, which for eachBatch commits after every batch whatever its interval: with 12
 * partitions, a dozen broker round trips a second at any load.
 */
const COMMIT_INTERVAL_MS = 5000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

export interface RunningEventProcessor {
  metricsPort: number;
  stop(): Promise<void>;
}

/** How often silent devices are looked for: often enough to raise deviceOffline within 10 s of its time. */
export function offlineSweepMs(offlineAfterMs: number): number {
  return Math.min(5000, Math.max(500, Math.floor(offlineAfterMs / 2)));
}

export async function start(
  config: EventProcessorConfig,
  logger: Logger = createLogger('event-processor', config.LOG_LEVEL),
): Promise<RunningEventProcessor> {
  const pool = await connectPool(config, 'event-processor', logger);
  const registry = createMetricsRegistry('event-processor');
  const metrics = createEventMetrics(registry, pool);
  const metricsServer = await serveMetrics(registry, config.METRICS_PORT).catch(async (error: Error) => {
    await pool.end();
    throw new Error(`cannot serve metrics on METRICS_PORT=${config.METRICS_PORT}: ${error.message}`, { cause: error });
  });

  const topic = topicsFor(config.KAFKA_TOPIC_PREFIX).positions;
  const groupId = config.EVENT_PROCESSOR_GROUP_ID ?? `${config.KAFKA_TOPIC_PREFIX}.event-processor`;
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: 'fleet-event-processor',
    logger,
    outages: createKafkaOutageMetrics(registry),
  });
  const adminClient = new AdminClient(kafka.admin());
  const delivery = startWebhookDelivery({
    pool,
    logger,
    metrics,
    retryForMs: config.WEBHOOK_RETRY_FOR,
    firstRetryAfterMs: config.WEBHOOK_FIRST_RETRY_AFTER,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
  });
  const process = positionProcessor({
    pool,
    logger,
    metrics,
    defaultSpeedLimitKmh: config.OVERSPEED_LIMIT_KMH,
    onDeliveries: () => delivery.due(),
  });
  const offsets = new OffsetCommitter({ topic, logger });

  // A batch that cannot be processed (PostgreSQL away) is tried again with growing pauses while the
  // consumer stays in its group; nothing after it in the partition is processed before it.
  async function handleBatch({ batch, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const positions = batch.messages.flatMap((message) => decodePositions(message.value, logger));
    for (let pauseMs = FIRST_RETRY_MS; ; pauseMs = Math.min(pauseMs * 2, MAX_RETRY_MS)) {
      try {
        await process(positions);
        offsets.stored(batch.partition, batch.lastOffset());
        return;
      } catch (error) {
        if (!isRunning() || isStale()) throw error;
        logger.warn(
          { err: (error as Error).message, partition: batch.partition, retryInMs: pauseMs },
          'could not process positions; retrying',
        );
        await sleep(pauseMs);
        await heartbeat();
      }
    }
  }

  let consumer;
  try {
    await adminClient.connect();
    const missing = await adminClient.ask((admin) => missingTopics(admin, [topic]));
    if (missing.length > 0) throw new Error(missingTopicsMessage(missing));
    consumer = await superviseConsumer({
      name: groupId,
      logger,
      create: () =>
        kafka.consumer(
          consumerConfig(groupId, {
            ...kafkaClientSettings(config),
            fetchMinBytes: Math.max(FETCH_MIN_BYTES, config.KAFKA_FETCH_MIN_BYTES),
            sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
          }),
        ),
      run: async (fresh) => {
        fresh.on(fresh.events.GROUP_JOIN, ({ payload }) => offsets.assigned(payload.memberAssignment[topic] ?? []));
        await fresh.connect();
        await fresh.subscribe({ topic, fromBeginning: true });
        await fresh.run({ partitionsConsumedConcurrently: CONCURRENCY, autoCommit: false, eachBatch: handleBatch });
      },
    });
  } catch (error) {
    await delivery.stop();
    await Promise.allSettled([pool.end(), metricsServer.close(), adminClient.close()]);
    throw new Error(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}: ${(error as Error).message}`, { cause: error });
  }
  registerConsumerLag(registry, adminClient, { groupId, topic });
  const committer = offsets.commitEvery(COMMIT_INTERVAL_MS, () => consumer.current());

  const sweep = startChore(
    {
      name: 'raising deviceOffline',
      everyMs: offlineSweepMs(config.DEVICE_OFFLINE_AFTER),
      run: async () => {
        const offline = await sweepOffline(pool, config.DEVICE_OFFLINE_AFTER);
        if (offline.raised) metrics.raised(Array.from({ length: offline.raised }, () => 'deviceOffline' as const));
        if (offline.deliveries) delivery.due();
      },
    },
    logger,
  );
  logger.info({ topic, groupId, metricsPort: metricsServer.port }, 'event-processor consuming');

  return {
    metricsPort: metricsServer.port,
    async stop() {
      clearInterval(committer);
      await consumer.stop((current) => offsets.commitTo(current));
      await Promise.all([sweep.stop(), delivery.stop()]);
      await Promise.allSettled([pool.end(), adminClient.close()]);
      await metricsServer.close();
      logger.info('event-processor stopped');
    },
  };
}

// The one place kafkajs clients are built, so every service talks to the brokers the same way and
// kafkajs's own logging flows into pino.
import { Kafka, logLevel as KafkaLogLevel, Partitioners, type LogEntry, type ProducerConfig } from 'kafkajs';
import type { Logger } from '../logger';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Per-request timeout; a stalled broker must not hold a request longer than this. */
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
}

function toPino(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...extra } = log;
      if (level <= KafkaLogLevel.ERROR) logger.error(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.WARN) logger.warn(extra, `kafka: ${message}`);
      else logger.debug(extra, `kafka: ${message}`);
    };
}

export function createKafka(options: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 10_000,
    logLevel: KafkaLogLevel.WARN,
    logCreator: toPino(options.logger),
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
  });
}

/**
 * Producer settings every service shares. The murmur2 partitioner is the one Java clients use, so a
 * device's key maps to the same partition whichever client produced it.
 */
export function producerConfig(overrides: ProducerConfig = {}): ProducerConfig {
  return { allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner, ...overrides };
}

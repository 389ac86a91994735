// The write path as the processes that take positions from outside build it, the gateway and the
// Teltonika listener alike: the command bus to the writers and the rate limits, from the write path's
// settings (writePathEnv), so that both publish, wait and limit the same way.
import type { Kafka } from 'kafkajs';
import type { Redis } from 'ioredis';
import type { Logger } from '@fleet/shared/logger';
import { kafkaClientSettings } from '@fleet/shared/kafka/client';
import type { Topics } from '@fleet/shared/kafka/topics';
import { CommandBus } from './kafka/command-bus';
import type { CommandBusOptions } from './kafka/command-request';
import { createWriteLimits, type WriteLimits } from './rate-limits/write-limits';

export interface WritePathSettings {
  instanceId: string;
  KAFKA_AUTO_CREATE_TOPICS: boolean;
  KAFKA_FETCH_MAX_WAIT_MS: number;
  KAFKA_FETCH_MIN_BYTES: number;
  KAFKA_LINGER_MS: number;
  REPLY_TIMEOUT_MS: number;
  PUBLISH_TIMEOUT_MS: number;
  MAX_IN_FLIGHT: number;
  MAX_QUEUE_AGE_MS: number;
  CACHE_KEY_PREFIX: string;
  RATE_LIMIT_DEVICE_PER_MINUTE: number;
  RATE_LIMIT_DEVICE_BURST: number;
  RATE_LIMIT_SUBJECT_PER_SECOND: number;
  RATE_LIMIT_SUBJECT_BURST: number;
}

export interface WritePathParts {
  kafka: Kafka;
  topics: Topics;
  /** The rate limits' own connection. */
  redis: Redis;
  logger: Logger;
  /** The bus's observers (publishes, replies, reply entries read), where a process counts them. */
  observe?: Pick<CommandBusOptions, 'onPublish' | 'onReply' | 'onReplyRead'>;
  /** Counts a write let through unchecked, Redis being unavailable. */
  onLimitFallback?: () => void;
}

export function createWritePath(config: WritePathSettings, parts: WritePathParts): { bus: CommandBus; limits: WriteLimits } {
  const { kafka, topics, redis, logger } = parts;
  const bus = new CommandBus({
    kafka,
    topics,
    instanceId: config.instanceId,
    settings: kafkaClientSettings(config),
    lingerMs: config.KAFKA_LINGER_MS,
    logger,
    replyTimeoutMs: config.REPLY_TIMEOUT_MS,
    maxPending: config.MAX_IN_FLIGHT,
    publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
    maxQueueAgeMs: config.MAX_QUEUE_AGE_MS,
    ...parts.observe,
  });
  const limits = createWriteLimits({
    redis,
    keyPrefix: config.CACHE_KEY_PREFIX,
    settings: {
      devicePerMinute: config.RATE_LIMIT_DEVICE_PER_MINUTE,
      deviceBurst: config.RATE_LIMIT_DEVICE_BURST,
      subjectPerSecond: config.RATE_LIMIT_SUBJECT_PER_SECOND,
      subjectBurst: config.RATE_LIMIT_SUBJECT_BURST,
    },
    logger,
    onFallback: parts.onLimitFallback,
  });
  return { bus, limits };
}

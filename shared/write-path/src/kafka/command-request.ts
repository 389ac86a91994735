// What the command bus is given and asked to publish, and the reply shapes it answers with: one reply
// to a command, a list of replies to a list published as one message.
import type { Kafka } from 'kafkajs';
import { AppError } from '@fleet/shared/errors';
import type { KafkaClientSettings } from '@fleet/shared/kafka/client';
import type { Topics } from '@fleet/shared/kafka/topics';
import type { Logger } from '@fleet/shared/logger';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import type { PendingAnswer } from './pending-replies';

export interface CommandBusOptions {
  kafka: Kafka;
  topics: Topics;
  /** Unique per running gateway; names its reply consumer group. */
  instanceId: string;
  settings: KafkaClientSettings;
  logger: Logger;
  /** How long a request waits for its writer's reply before answering 503. */
  replyTimeoutMs: number;
  /**
   * The most commands waiting for a reply at once. Past it a request is refused with a 503 at once
   * rather than held: behind a slow writer it would only wait out replyTimeoutMs, and each one waiting
   * holds its request, its body and a socket.
   */
  maxPending: number;
  /** How long a produce may take before the broker is considered unavailable. */
  publishTimeoutMs: number;
  /**
   * Past this, with a request waiting longer and no prompt reply for a second, new commands are refused
   * with a retry-safe 503 at once (QueueAgeAdmission); 0 admits every command.
   */
  maxQueueAgeMs: number;
  /** Kafka's linger.ms; see BatchingPublisherOptions.lingerMs. */
  lingerMs: number;
  /** Observes each produce: batch size and seconds taken. */
  onPublish?: (size: number, seconds: number, ok: boolean) => void;
  /** Observes each request that was published: seconds from request() to the reply, or to its timeout. */
  onReply?: (seconds: number, outcome: 'replied' | 'timeout') => void;
  /** Counts each reply entry the listener reads: this gateway's own, or another's. */
  onReplyRead?: (owner: 'self' | 'other') => void;
}

export interface CommandRequest {
  topic: string;
  /** Places the message (the producer's partitioner) unless `partition` does; null with a partition. */
  key: string | null;
  partition?: number;
  value: unknown;
  headers?: Record<string, string>;
}

/**
 * Commands published as one message: they reach one partition in their order, cost one record, one
 * correlation id and one reply entry, and are stored and answered as the message's. They share a key,
 * or they share a partition (`partitionOf` of each command's key) and name it.
 */
export interface CommandListRequest {
  topic: string;
  key: string | null;
  partition?: number;
  values: readonly unknown[];
  headers?: Record<string, string>;
}

/** A reply not of the shape the message asked for is a writer's fault, never the client's: a 500. */
function mismatch(detail: string): AppError {
  return new AppError({ kind: 'internal', cause: new Error(`reply of the wrong shape: ${detail}`) });
}

export function single(answer: PendingAnswer): CommandReply {
  if (Array.isArray(answer)) throw mismatch('a list of replies to one command');
  return answer;
}

export function listOf(length: number) {
  return (answer: PendingAnswer): CommandReply[] => {
    if (!Array.isArray(answer) || answer.length !== length) throw mismatch(`expected ${length} replies to a list of commands`);
    return answer;
  };
}

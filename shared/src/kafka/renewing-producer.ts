// An idempotent producer, replaced when it may have lost track of its sequence numbers. A produce
// abandoned at its timeout (a frozen broker) has used sequence numbers the broker then writes when it
// wakes, and kafkajs's idempotent producer then fails every later produce to that partition with "out of
// order sequence number", for good: a gateway would answer those writes 503 while readiness says Kafka is
// back, and a writer would retry its replies for ever without committing, its partitions stalled. Worse, a
// produce kafkajs gave up on after the broker wrote it hands its sequence numbers to the next records,
// which the broker drops as the same write when they are as many. A new producer gets a new producer id
// and starts its sequences afresh (a record sent again after it may be in the log twice; every consumer
// here takes a record once by its id).
import { timeout, TimeoutStrategy } from 'cockatiel';
import type { Kafka, Producer, ProducerConfig, TopicMessages } from 'kafkajs';
import type { Logger } from '../logger';
import { KAFKA_REQUEST_TIMEOUT_MS, PRODUCE_ACK_TIMEOUT_MS } from './client';

type ErrorChain = { name?: unknown; type?: unknown; originalError?: unknown; cause?: unknown } | undefined;

/** Whether an error or any error behind it (kafkajs's retries wrap the last one) matches. */
function anyInChain(error: unknown, matches: (current: NonNullable<ErrorChain>) => boolean): boolean {
  for (let current = error as ErrorChain; current; current = (current.originalError ?? current.cause) as ErrorChain) {
    if (matches(current)) return true;
  }
  return false;
}

/** True when kafkajs reports, directly or as the cause of its retries, that the broker refused a sequence. */
export function lostSequence(error: unknown): boolean {
  return anyInChain(error, (current) => current.type === 'OUT_OF_ORDER_SEQUENCE_NUMBER');
}

/**
 * True when kafkajs gave up on a produce the broker may have written: the broker answered that its
 * replicas did not confirm it in time (it is in the leader's log), or no answer came at all. kafkajs then
 * hands the same sequence numbers to the next produce, which the broker would refuse or, holding as many
 * records, take for the one it has and drop.
 */
export function unknownOutcome(error: unknown): boolean {
  return anyInChain(error, (current) => current.type === 'REQUEST_TIMED_OUT' || current.name === 'KafkaJSRequestTimeoutError');
}

/**
 * The longest a new producer may take to connect before the attempt is dropped and left to the next
 * failure: a frozen first broker holds it a connection timeout, and while the active controller is
 * frozen a node asked for an id answers that it is loading until its request for a block of ids times
 * out (the broker's controller.socket.timeout.ms: 3 s in our clusters, Kafka's default 30 s) and goes
 * to the new controller.
 */
const RENEW_CONNECT_MS = 2 * KAFKA_REQUEST_TIMEOUT_MS;

export class RenewingProducer {
  private producer: Producer;
  private renewing = false;
  /** Sends in flight on each producer, so that one replaced is disconnected only once they are over. */
  private readonly sending = new Map<Producer, number>();
  private readonly replaced = new Set<Producer>();
  private readonly connectDeadline = timeout(RENEW_CONNECT_MS, TimeoutStrategy.Aggressive);

  constructor(private readonly options: { kafka: Kafka; config: ProducerConfig; logger: Logger }) {
    this.producer = options.kafka.producer(options.config);
  }

  /** The producer now, for one-off sends (the reply-path probe). */
  current(): Producer {
    return this.producer;
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async disconnect(): Promise<void> {
    await Promise.all([this.producer, ...this.replaced].map((producer) => producer.disconnect()));
    this.replaced.clear();
  }

  async sendBatch(topicMessages: TopicMessages[]): Promise<void> {
    const producer = this.producer;
    this.sending.set(producer, (this.sending.get(producer) ?? 0) + 1);
    try {
      await producer.sendBatch({ acks: -1, timeout: PRODUCE_ACK_TIMEOUT_MS, topicMessages });
    } catch (error) {
      // Sends go on with the old producer while a new one connects: the partitions it did not lose
      // track of still work, and connecting can take a while when the node asked for a producer id is
      // the one that went silent.
      if ((lostSequence(error) || unknownOutcome(error)) && producer === this.producer) this.renew();
      throw error;
    } finally {
      const left = this.sending.get(producer)! - 1;
      if (left > 0) this.sending.set(producer, left);
      else this.sending.delete(producer);
      if (left === 0 && this.replaced.delete(producer)) void producer.disconnect().catch(() => undefined);
    }
  }

  private renew(): void {
    if (this.renewing) return;
    this.renewing = true;
    const fresh = this.options.kafka.producer(this.options.config);
    this.connectDeadline
      .execute(() => fresh.connect())
      .then(
        () => {
          const old = this.producer;
          this.producer = fresh;
          this.options.logger.warn('the Kafka producer may have lost track of its sequence numbers; a new one replaces it');
          if (this.sending.has(old)) this.replaced.add(old);
          else void old.disconnect().catch(() => undefined);
        },
        (error: Error) => {
          this.options.logger.warn({ err: error.message }, 'a new Kafka producer could not connect; the next failed produce tries again');
          void fresh.disconnect().catch(() => undefined);
        },
      )
      .finally(() => {
        this.renewing = false;
      });
  }
}

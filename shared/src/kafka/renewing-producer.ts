// An idempotent producer, replaced when the broker refuses its sequence numbers. A produce abandoned at
// its timeout (a frozen broker) has used sequence numbers the broker then writes when it wakes, and
// kafkajs's idempotent producer fails every later produce with "out of order sequence number", for good:
// a gateway would answer every write 503 while readiness says Kafka is back, and a writer would retry
// its replies for ever without committing, its partitions stalled. A new producer gets a new producer id
// and starts its sequences afresh.
import type { Kafka, Producer, ProducerConfig, TopicMessages } from 'kafkajs';
import type { Logger } from '../logger';

/** True when kafkajs reports, directly or as the cause of its retries, that the broker refused a sequence. */
export function lostSequence(error: unknown): boolean {
  for (let current = error as { type?: unknown; originalError?: unknown; cause?: unknown } | undefined; current;) {
    if (current.type === 'OUT_OF_ORDER_SEQUENCE_NUMBER') return true;
    current = (current.originalError ?? current.cause) as typeof current;
  }
  return false;
}

export class RenewingProducer {
  private producer: Producer;
  private broken = false;
  private renewing: Promise<void> | undefined;

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

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  async sendBatch(topicMessages: TopicMessages[]): Promise<void> {
    if (this.broken) await this.renew();
    try {
      await this.producer.sendBatch({ acks: -1, topicMessages });
    } catch (error) {
      if (lostSequence(error)) this.broken = true;
      throw error;
    }
  }

  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      const fresh = this.options.kafka.producer(this.options.config);
      await fresh.connect();
      const old = this.producer;
      this.producer = fresh;
      this.broken = false;
      this.options.logger.warn('the Kafka producer lost its sequence numbers; a new one replaces it');
      void old.disconnect().catch(() => undefined);
    })().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }
}

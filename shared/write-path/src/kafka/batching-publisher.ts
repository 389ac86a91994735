// Sends the gateway's commands in batches: commands from concurrent requests are gathered while a
// produce is in flight (and for at most the linger) and sent as one, so throughput grows with load
// instead of paying a broker round trip per request. On a cluster each partition leader's commands are
// batched and sent on their own, side by side, so that a broker that is slow or down holds up and fails
// only the commands bound for it: the rest are stored and answered as if nothing had happened.
import type { Message, TopicMessages } from 'kafkajs';
import { messageBytes } from '@fleet/shared/kafka/produce-size';

export interface OutgoingCommand {
  topic: string;
  message: Message;
  correlationId: string;
  /** The commands the message holds when it is a list of them; 1 when absent. */
  commands?: number;
}

export interface BatchingPublisherOptions {
  /** Produces one batch; rejects when it could not be published in time. */
  send: (topicMessages: TopicMessages[]) => Promise<void>;
  /**
   * The most commands sent in one produce request, a list counting each of its commands (one list
   * longer than this goes alone): it bounds the record batch a partition gets, which Kafka refuses whole
   * past message.max.bytes (1 MB by default).
   */
  maxBatchSize: number;
  /** The most bytes sent in one produce request (a message heavier alone goes alone), for the same reason. */
  maxBatchBytes: number;
  /**
   * The shortest time between two produce requests: commands arriving within it of a produce gather for
   * the next, so a busy gateway sends few large record batches rather than many small ones. Unlike
   * Kafka's linger.ms, the first command after a quiet moment goes at once: only those that follow it
   * closely wait. 0 sends at once.
   */
  lingerMs: number;
  /**
   * How long a produce may take before its commands are answered as failed. The client may still be
   * sending it: until it has finished, the lane sends nothing more and fails what it is given at once,
   * so that two produces are never in flight to one partition (after a failure, the broker would take
   * the second's sequence numbers as out of order and refuse the producer for good). Unset, no limit.
   */
  sendTimeoutMs?: number;
  /** Told of each batch sent: its commands, seconds taken, the error when it failed, and the leader it was for. */
  onSent: (batch: OutgoingCommand[], seconds: number, error: unknown, leader: number | undefined) => void;
  /**
   * The broker a command's partition is led by, as far as known. Each leader's commands are batched and
   * sent apart from the others', side by side.
   */
  leaderOf?: (command: OutgoingCommand) => number | undefined;
}

/** A produce sent and not confirmed within sendTimeoutMs: its commands may or may not be stored. */
export class PublishTimedOut extends Error {
  override name = 'PublishTimedOut';
}

/** A batch not sent at all: the lane's last produce is still unanswered. Nothing of it was published. */
export class LeaderStillBusy extends Error {
  override name = 'LeaderStillBusy';
}

/** Groups a batch's messages by topic, in the order they were queued. */
export function byTopic(batch: readonly OutgoingCommand[]): TopicMessages[] {
  const messages = new Map<string, Message[]>();
  for (const { topic, message } of batch) {
    const list = messages.get(topic) ?? [];
    list.push(message);
    messages.set(topic, list);
  }
  return [...messages].map(([topic, list]) => ({ topic, messages: list }));
}

/**
 * Sends the commands handed to it, each batch once the last is out: the commands of one partition leader
 * (or of the only broker), in their order.
 */
class Lane {
  private queue: OutgoingCommand[] = [];
  private flushing = false;
  /** A produce given up on at sendTimeoutMs that the client is still sending. */
  private unsettled: Promise<void> | undefined;

  constructor(
    private readonly options: BatchingPublisherOptions,
    /** The leader its commands are bound for, as leaderOf said; undefined when unknown or not asked. */
    private readonly leader: number | undefined,
  ) {}

  /** Commands arriving in the same turn of the event loop, or while a produce is in flight, share a batch. */
  publish(command: OutgoingCommand): void {
    this.queue.push(command);
    if (this.flushing) return;
    this.flushing = true;
    // The lane is idle only once the linger since its last produce has passed (flush sleeps it out).
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const { maxBatchSize, lingerMs } = this.options;
    try {
      while (this.queue.length > 0) {
        const startedAt = performance.now();
        await this.sendBatch(this.queue.splice(0, this.fitting()));
        // Whatever comes next, waiting already or arriving meanwhile, goes no sooner than the linger.
        const rest = lingerMs - (performance.now() - startedAt);
        if (rest > 0 && this.queuedCommands() < maxBatchSize) await new Promise((resolve) => setTimeout(resolve, rest));
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Commands accepted and not yet handed to the producer. */
  queuedCommands(): number {
    return this.queue.reduce((sum, queued) => sum + (queued.commands ?? 1), 0);
  }

  /** How many queued messages, from the head, hold at most maxBatchSize commands and maxBatchBytes; at least one. */
  private fitting(): number {
    const { maxBatchSize, maxBatchBytes } = this.options;
    let commands = 0;
    let bytes = 0;
    for (let count = 0; count < this.queue.length; count += 1) {
      const queued = this.queue[count]!;
      commands += queued.commands ?? 1;
      bytes += messageBytes(queued.message);
      if (commands > maxBatchSize || bytes > maxBatchBytes) return Math.max(count, 1);
    }
    return this.queue.length;
  }

  private async sendBatch(batch: OutgoingCommand[]): Promise<void> {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    if (this.unsettled) {
      this.options.onSent(batch, 0, new LeaderStillBusy('the broker has not yet answered the last produce to it'), this.leader);
      return;
    }
    const sending = this.options.send(byTopic(batch));
    try {
      await this.withinTimeout(sending);
      this.options.onSent(batch, seconds(), undefined, this.leader);
    } catch (error) {
      this.options.onSent(batch, seconds(), error, this.leader);
    }
  }

  /** Resolves as `sending` does, or rejects at sendTimeoutMs, leaving the lane closed until it settles. */
  private withinTimeout(sending: Promise<void>): Promise<void> {
    const { sendTimeoutMs } = this.options;
    if (sendTimeoutMs === undefined) return sending;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const settled = sending.then(
          () => undefined,
          () => undefined,
        );
        this.unsettled = settled;
        void settled.then(() => {
          if (this.unsettled === settled) this.unsettled = undefined;
        });
        reject(new PublishTimedOut(`Operation timed out after ${sendTimeoutMs}ms`));
      }, sendTimeoutMs);
    });
    return Promise.race([sending, timedOut]).finally(() => clearTimeout(timer));
  }
}

export class BatchingPublisher {
  /** One lane a partition leader, so that a broker slow or down holds up only its own commands. */
  private readonly lanes = new Map<number | undefined, Lane>();

  constructor(private readonly options: BatchingPublisherOptions) {}

  publish(command: OutgoingCommand): void {
    const leader = this.options.leaderOf?.(command);
    let lane = this.lanes.get(leader);
    if (!lane) {
      lane = new Lane(this.options, leader);
      this.lanes.set(leader, lane);
    }
    lane.publish(command);
  }

  /** Commands accepted and not yet handed to the producer: gathering for their batch, or behind one in flight. */
  unsentCount(): number {
    let count = 0;
    for (const lane of this.lanes.values()) count += lane.queuedCommands();
    return count;
  }
}

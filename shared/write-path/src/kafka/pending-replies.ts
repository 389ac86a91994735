// The gateway's table of requests waiting for a writer's reply: each is answered by its reply (a list of
// replies for a list of commands), by a failure to publish it, or by a 503 once it has waited
// replyTimeoutMs, whichever comes first.
import { EventEmitter, once } from 'node:events';
import { AppError } from '@fleet/shared/errors';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';

export interface PendingRepliesOptions {
  /** How long a request waits for its reply before answering 503. */
  replyTimeoutMs: number;
  /** Observes each request that was answered: seconds waited, and whether by a reply or by its timeout. */
  onSettled?: (seconds: number, outcome: 'replied' | 'timeout') => void;
}

/** What a published message is answered with: a reply, or a list of them for a list of commands. */
export type PendingAnswer = CommandReply | CommandReply[];

interface Pending {
  resolve: (answer: PendingAnswer) => void;
  reject: (error: AppError) => void;
  /** performance.now() when the request was added. */
  startedAt: number;
  /** The commands it counts for in `size`. */
  commands: number;
  /** The partition of the reply topic its reply is written to. */
  replyPartition: number | undefined;
}

/** How often overdue requests are looked for: a timeout is answered at most 5% (and 100 ms) late. */
export function expiryCheckInterval(replyTimeoutMs: number): number {
  return Math.min(100, Math.max(5, Math.floor(replyTimeoutMs / 20)));
}

export class PendingReplies {
  /**
   * Oldest first: every request waits the same replyTimeoutMs, so the order of insertion is the order of
   * expiry, and one sweep finds the expired ones at the head instead of a timer being set and cleared for
   * every request.
   */
  private readonly waiting = new Map<string, Pending>();
  private commands = 0;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly emptied = new EventEmitter();

  constructor(private readonly options: PendingRepliesOptions) {}

  /** Commands waiting, a list counting each of its commands. */
  get size(): number {
    return this.commands;
  }

  /** performance.now() when the oldest request still waiting was added; undefined when none waits. */
  oldestStartedAt(): number | undefined {
    for (const entry of this.waiting.values()) return entry.startedAt;
    return undefined;
  }

  /** True while the request with this correlation id waits here; replies to other gateways' requests are not. */
  has(correlationId: string): boolean {
    return this.waiting.has(correlationId);
  }

  /**
   * Resolves with the answer to this correlation id; rejects with a 503 AppError when none comes in time.
   * `commands`: how many the published message carries.
   */
  add(correlationId: string, commands = 1, replyPartition?: number): Promise<PendingAnswer> {
    return new Promise<PendingAnswer>((resolve, reject) => {
      this.waiting.set(correlationId, { resolve, reject, startedAt: performance.now(), commands, replyPartition });
      this.commands += commands;
      this.sweepTimer ??= setInterval(() => this.expire(), expiryCheckInterval(this.options.replyTimeoutMs));
    });
  }

  /** Answers the request with this correlation id, if it is still waiting here; false otherwise. */
  reply(correlationId: string, settle: { reply: PendingAnswer } | { error: AppError }): boolean {
    const entry = this.take(correlationId);
    if (!entry) return false;
    this.options.onSettled?.((performance.now() - entry.startedAt) / 1000, 'replied');
    if ('reply' in settle) entry.resolve(settle.reply);
    else entry.reject(settle.error);
    return true;
  }

  /** Fails requests that will get no reply (their command was never published); not counted as replied. */
  fail(correlationIds: Iterable<string>, error: AppError): void {
    for (const correlationId of correlationIds) this.take(correlationId)?.reject(error);
  }

  /** Fails the requests whose replies are written to these partitions: another gateway reads them now. */
  failOnPartitions(partitions: ReadonlySet<number>, error: AppError): number {
    const moved = [...this.waiting].filter(([, entry]) => entry.replyPartition !== undefined && partitions.has(entry.replyPartition));
    this.fail(
      moved.map(([correlationId]) => correlationId),
      error,
    );
    return moved.length;
  }

  /** Resolves once no request waits any more, or after at most timeoutMs. */
  async drained(timeoutMs: number): Promise<void> {
    if (this.waiting.size === 0) return;
    await once(this.emptied, 'empty', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  }

  private take(correlationId: string): Pending | undefined {
    const entry = this.waiting.get(correlationId);
    if (!entry) return undefined;
    this.waiting.delete(correlationId);
    this.commands -= entry.commands;
    if (this.waiting.size === 0) this.onEmpty();
    return entry;
  }

  /** Answers 503 to the requests whose reply is overdue. */
  private expire(): void {
    const now = performance.now();
    for (const [correlationId, entry] of this.waiting) {
      const waited = now - entry.startedAt;
      if (waited < this.options.replyTimeoutMs) break;
      this.take(correlationId);
      this.options.onSettled?.(waited / 1000, 'timeout');
      entry.reject(
        new AppError({
          kind: 'replyTimeout',
          detail: `no reply within ${this.options.replyTimeoutMs} ms; retrying is safe`,
          retryAfterSeconds: 1,
        }),
      );
    }
  }

  /** Stops sweeping while nothing waits, so an idle gateway keeps no timer running. */
  private onEmpty(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.emptied.emit('empty');
  }
}

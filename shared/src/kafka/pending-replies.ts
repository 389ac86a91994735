// The gateway's table of requests waiting for a writer's reply: each is answered by its reply, by a
// failure to publish it, or by a 503 once it has waited replyTimeoutMs, whichever comes first.
import { EventEmitter, once } from 'node:events';
import { AppError } from '../errors';
import type { CommandReply } from '../schemas/reply.schema';

export interface PendingRepliesOptions {
  /** How long a request waits for its reply before answering 503. */
  replyTimeoutMs: number;
  /** Observes each request that was answered: seconds waited, and whether by a reply or by its timeout. */
  onSettled?: (seconds: number, outcome: 'replied' | 'timeout') => void;
}

interface Pending {
  resolve: (reply: CommandReply) => void;
  reject: (error: AppError) => void;
  /** performance.now() when the request was added. */
  startedAt: number;
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
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly emptied = new EventEmitter();

  constructor(private readonly options: PendingRepliesOptions) {}

  get size(): number {
    return this.waiting.size;
  }

  /** True while the request with this correlation id waits here; replies to other gateways' requests are not. */
  has(correlationId: string): boolean {
    return this.waiting.has(correlationId);
  }

  /** Resolves with the reply to this correlation id; rejects with a 503 AppError when none comes in time. */
  add(correlationId: string): Promise<CommandReply> {
    return new Promise<CommandReply>((resolve, reject) => {
      this.waiting.set(correlationId, { resolve, reject, startedAt: performance.now() });
      this.sweepTimer ??= setInterval(() => this.expire(), expiryCheckInterval(this.options.replyTimeoutMs));
    });
  }

  /** Answers the request with this correlation id, if it is still waiting here; false otherwise. */
  reply(correlationId: string, settle: { reply: CommandReply } | { error: AppError }): boolean {
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

  /** Resolves once no request waits any more, or after at most timeoutMs. */
  async drained(timeoutMs: number): Promise<void> {
    if (this.waiting.size === 0) return;
    await once(this.emptied, 'empty', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  }

  private take(correlationId: string): Pending | undefined {
    const entry = this.waiting.get(correlationId);
    if (!entry) return undefined;
    this.waiting.delete(correlationId);
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

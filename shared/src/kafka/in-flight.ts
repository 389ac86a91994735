// Counts the batches being handled, so that stopping can wait for the one in progress.
import { EventEmitter, once } from 'node:events';

export class InFlight {
  private count = 0;
  private readonly events = new EventEmitter();

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.count += 1;
    try {
      return await work();
    } finally {
      this.count -= 1;
      if (this.count === 0) this.events.emit('idle');
    }
  }

  /** Resolves once nothing is in flight, or after at most timeoutMs. */
  async idle(timeoutMs: number): Promise<void> {
    if (this.count === 0) return;
    await once(this.events, 'idle', { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  }
}

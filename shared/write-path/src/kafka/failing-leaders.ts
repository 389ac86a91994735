// The brokers that failed a produce lately, on a cluster. One broker down is not Kafka down: only the
// commands bound for it fail, the reply partitions it leads are avoided, and the partitions' leaders are
// asked for again (the cluster moves them to the brokers left) until a produce to it succeeds again.
import type { Logger } from '@fleet/shared/logger';

/** After a produce to one leader failed, the soonest the partitions' leaders are asked for again. */
const LEADERS_REFRESH_MS = 1000;

export class FailingLeaders {
  private readonly failing = new Set<number>();
  private askedAt = 0;

  constructor(
    /** Asks the cluster for the partitions' leaders now. */
    private readonly refreshLeaders: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  failed(leader: number, error: Error): void {
    if (!this.failing.has(leader)) {
      this.logger.warn(
        { broker: leader, err: error.message },
        'a Kafka broker refused or timed out a produce; its partitions answer 503 until their leaders move',
      );
    }
    this.failing.add(leader);
    if (Date.now() - this.askedAt < LEADERS_REFRESH_MS) return;
    this.askedAt = Date.now();
    this.refreshLeaders().catch(() => undefined);
  }

  succeeded(leader: number): void {
    this.failing.delete(leader);
  }

  none(): boolean {
    return this.failing.size === 0;
  }

  /** Whether a partition led by `leader` may be used: an unknown leader is given the benefit of the doubt. */
  healthy(leader: number | undefined): boolean {
    return leader === undefined || !this.failing.has(leader);
  }
}

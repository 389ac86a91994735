// Whether the gateway can reach Kafka. Every produce reports its outcome here, and a background check
// (more frequent while the broker is down) keeps readiness true to an outage even without traffic.
import type { Logger } from '@fleet/shared/logger';

export interface BrokerHealthOptions {
  /** Asks the broker something cheap; rejects when it cannot answer in time. */
  check: () => Promise<unknown>;
  /** How often the broker is checked while it is up; while it is down, at least every second. */
  intervalMs: number;
  logger: Logger;
}

const DOWN_CHECK_INTERVAL_MS = 1000;

export class BrokerHealth {
  private downSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private checking = false;

  constructor(private readonly options: BrokerHealthOptions) {}

  isUp(): boolean {
    return this.downSince === undefined;
  }

  /** Starts the background checks. */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  markDown(error: unknown): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.options.logger.error({ err: (error as Error).message }, 'Kafka is unavailable; answering 503 until it returns');
    if (this.timer) this.schedule();
  }

  /**
   * A produce failed, but perhaps only to one broker of several: the broker is checked at once, and
   * counted down only if the check fails too.
   */
  checkSoon(): void {
    if (this.stopped || this.checking) return;
    clearTimeout(this.timer);
    void this.checkNow();
  }

  markUp(): void {
    if (this.downSince === undefined) return;
    this.options.logger.info({ downForMs: Date.now() - this.downSince }, 'Kafka is available again');
    this.downSince = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const { intervalMs } = this.options;
    this.timer = setTimeout(() => void this.checkNow(), this.isUp() ? intervalMs : Math.min(intervalMs, DOWN_CHECK_INTERVAL_MS));
    this.timer.unref();
  }

  /** One check, then the next one scheduled; never rejects. */
  private async checkNow(): Promise<void> {
    this.checking = true;
    try {
      await this.options.check();
      this.markUp();
    } catch (error) {
      this.markDown(error);
    } finally {
      this.checking = false;
    }
    this.schedule();
  }
}

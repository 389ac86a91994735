// How a writer retries a step of a batch (storing it, publishing its replies) that failed for an outage:
// with a growing pause, heartbeating meanwhile, for as long as this member still owns the partition.
// Each step's outage is logged once when it starts and once when it ends, however many partitions hit it.
import { ExponentialBackoff, handleWhen, noJitterGenerator, retry } from 'cockatiel';
import type { Logger } from '../logger';

/** What the retries need from the batch being handled. */
export interface BatchLease {
  /** False once the partition was revoked or the consumer stops: the step is abandoned, uncommitted. */
  owned(): boolean;
  heartbeat(): Promise<void>;
  /** Names the batch in the log line that reports the outage. */
  context(): Record<string, unknown>;
}

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2000;

export class OwnershipLost extends Error {
  override name = 'OwnershipLost';
}

export class StepRetry {
  private failingSince: number | undefined;

  /** `what` names the step in log lines, e.g. "storing to PostgreSQL". */
  constructor(
    private readonly what: string,
    private readonly logger: Logger,
  ) {}

  /** The step's result, or undefined once the partition is no longer owned. */
  async run<T>(step: () => Promise<T>, lease: BatchLease): Promise<T | undefined> {
    const policy = retry(
      handleWhen(() => lease.owned()),
      {
        maxAttempts: Infinity,
        backoff: new ExponentialBackoff({ initialDelay: FIRST_PAUSE_MS, maxDelay: LONGEST_PAUSE_MS, generator: noJitterGenerator }),
      },
    );
    try {
      const result = await policy.execute(async ({ attempt }) => {
        if (attempt > 0) {
          await lease.heartbeat().catch(() => undefined);
          if (!lease.owned()) throw new OwnershipLost();
        }
        try {
          return await step();
        } catch (error) {
          this.failed(error, lease);
          throw error;
        }
      });
      this.succeeded();
      return result;
    } catch (error) {
      if (!lease.owned()) return undefined;
      throw error;
    }
  }

  private failed(error: unknown, lease: BatchLease): void {
    if (this.failingSince !== undefined) return;
    this.failingSince = Date.now();
    this.logger.error({ err: (error as Error).message, ...lease.context() }, `${this.what} failed; retrying without committing offsets`);
  }

  private succeeded(): void {
    if (this.failingSince === undefined) return;
    this.logger.info({ downForMs: Date.now() - this.failingSince }, `${this.what} works again`);
    this.failingSince = undefined;
  }
}

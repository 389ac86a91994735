// Which offsets a consumer may commit, and committing them. A batch's offset is committed only after the
// batch is done with (a writer's stored and replied to, the gateway's replies handed to their requests),
// and by a timer rather than per batch (a commit per batch would be a broker round trip in each
// partition's cycle); a writer's crash redelivers at most one interval's commands, which the stores
// answer with their rows.
import type { Consumer, TopicPartitionOffsetAndMetadata } from 'kafkajs';
import type { Logger } from '../logger';

export type CommitOffsets = (offsets: TopicPartitionOffsetAndMetadata[]) => Promise<void>;

export class OffsetCommitter {
  /** Per partition, the next offset after the last batch stored and replied to, not yet committed. */
  private uncommitted = new Map<number, string>();
  /** Per partition, the furthest offset recorded while this member owns it, committed or not. */
  private furthest = new Map<number, bigint>();
  /** The partitions assigned to this member at its last group join. */
  private owned = new Set<number>();
  /** The commit under way, if any: commits run one after the other. */
  private inProgress: Promise<void> = Promise.resolve();

  constructor(private readonly options: { topic: string; logger: Logger }) {}

  /**
   * Takes the partitions this member owns after a rebalance. Offsets of partitions it no longer owns are
   * dropped: committed later, they could rewind what their new owner has committed.
   */
  assigned(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of this.uncommitted.keys()) if (!this.owned.has(partition)) this.uncommitted.delete(partition);
    for (const partition of this.furthest.keys()) if (!this.owned.has(partition)) this.furthest.delete(partition);
  }

  /**
   * Records that every message up to lastOffset of the partition is stored and replied to. Never moves a
   * partition's offset back: a batch of an earlier generation finishing late says nothing new.
   */
  stored(partition: number, lastOffset: string): void {
    const next = BigInt(lastOffset) + 1n;
    if (next <= (this.furthest.get(partition) ?? -1n)) return;
    this.furthest.set(partition, next);
    this.uncommitted.set(partition, next.toString());
  }

  /**
   * Commits what has been stored since the last commit; what fails is tried again next time. A commit
   * waits for the one under way, so the last commit of a writer that stops follows the timer's, and
   * takes back what that one failed to commit, instead of finding nothing left and letting the
   * consumer disconnect under it.
   */
  commit(commitOffsets: CommitOffsets): Promise<void> {
    const run = this.inProgress.then(() => this.commitNow(commitOffsets));
    this.inProgress = run.catch(() => undefined);
    return run;
  }

  /** Commits as `commit` does, through this consumer. */
  commitTo(consumer: Pick<Consumer, 'commitOffsets'>): Promise<void> {
    return this.commit((committed) => consumer.commitOffsets(committed));
  }

  /**
   * Commits every `intervalMs` through the consumer running then, if any, also while idle, so the
   * group's lag falls to zero once work stops. Clearing the returned timer stops it.
   */
  commitEvery(intervalMs: number, current: () => Pick<Consumer, 'commitOffsets'> | undefined): NodeJS.Timeout {
    const timer = setInterval(() => {
      const consumer = current();
      if (consumer) void this.commitTo(consumer);
    }, intervalMs);
    timer.unref();
    return timer;
  }

  private async commitNow(commitOffsets: CommitOffsets): Promise<void> {
    if (this.uncommitted.size === 0) return;
    const taken = [...this.uncommitted].filter(([partition]) => this.owned.has(partition));
    this.uncommitted = new Map();
    if (taken.length === 0) return;
    try {
      await commitOffsets(taken.map(([partition, offset]) => ({ topic: this.options.topic, partition, offset })));
    } catch (error) {
      for (const [partition, offset] of taken) {
        if (this.owned.has(partition) && !this.uncommitted.has(partition)) this.uncommitted.set(partition, offset);
      }
      this.options.logger.warn({ err: (error as Error).message }, 'could not commit offsets; retrying at the next interval');
    }
  }
}

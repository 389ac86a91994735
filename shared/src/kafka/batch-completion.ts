// When a writer's batch is done with. A writer goes on to its partitions' next batches while the replies
// and announcements of the last ones are still being sent (leader-sends.ts), so that one leader slow to
// answer holds up only what is bound for it. A batch is done with once what it sends is sent and every
// earlier batch of its partition is done with: only then may its offset be committed, or a crash would
// lose replies and announcements never sent.

export class BatchCompletion {
  /** Per partition, whether its batches handed over so far were all sent. */
  private tails = new Map<number, Promise<boolean>>();
  private unsent = 0;
  private readonly waitingForRoom: Array<() => void> = [];

  /** maxUnsent: the most messages handed over and not yet sent before a new batch waits (hasRoom). */
  constructor(private readonly maxUnsent: number) {}

  /** Resolves once fewer than maxUnsent messages wait to be sent, so that a leader away cannot fill memory. */
  async hasRoom(): Promise<void> {
    while (this.unsent >= this.maxUnsent) await new Promise<void>((resolve) => this.waitingForRoom.push(resolve));
  }

  /**
   * Follows a batch of `partition` whose `count` messages `sending` sends: it resolves true once they were
   * sent, false when they were abandoned (the partition is no longer this member's). `done` runs once
   * they and every earlier batch of the partition were sent; after one abandoned, none of the partition's
   * runs until `reset`. Resolves once the batch is settled either way.
   */
  track(partition: number, count: number, sending: Promise<boolean>, done: () => void): Promise<void> {
    this.unsent += count;
    const sent = sending.then(
      (outcome) => outcome,
      () => false,
    );
    void sent.then(() => this.release(count));
    const before = this.tails.get(partition) ?? Promise.resolve(true);
    const tail = Promise.all([before, sent]).then(([earlier, now]) => {
      if (!earlier || !now) return false;
      done();
      return true;
    });
    this.tails.set(partition, tail);
    return tail.then(() => undefined);
  }

  /** A new group generation: the partitions' batches start afresh from their committed offsets. */
  reset(): void {
    this.tails = new Map();
  }

  private release(count: number): void {
    this.unsent -= count;
    while (this.unsent < this.maxUnsent && this.waitingForRoom.length > 0) this.waitingForRoom.shift()!();
  }
}

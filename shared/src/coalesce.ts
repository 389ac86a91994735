// Turns many concurrent calls into one. A writer handles the partitions of a fetch concurrently, one
// batch each; storing them with one statement and replying with one produce costs one database commit
// and one broker round trip per fetch instead of one per partition. The gateway looks up the last
// locations asked for at once with one statement in the same way.

/** Stores or sends a list of items and answers one result per item, in order. */
export type BatchRun<T, R> = (items: T[]) => Promise<R[]>;

interface Waiting<T, R> {
  items: T[];
  resolve: (results: R[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Returns a function with the same contract as `run` whose calls made in the same turn of the event loop,
 * or while an earlier run is in flight, are served by one run over all their items. Each caller gets its
 * own slice of the results; when the run fails, every caller in it gets the error.
 */
export function coalesce<T, R>(run: BatchRun<T, R>): BatchRun<T, R> {
  let waiting: Array<Waiting<T, R>> = [];
  let scheduled = false;
  let running = false;

  async function flush(): Promise<void> {
    scheduled = false;
    running = true;
    const callers = waiting;
    waiting = [];
    try {
      const results = await run(callers.flatMap((caller) => caller.items));
      let offset = 0;
      for (const caller of callers) {
        caller.resolve(results.slice(offset, offset + caller.items.length));
        offset += caller.items.length;
      }
    } catch (error) {
      for (const caller of callers) caller.reject(error);
    } finally {
      running = false;
      schedule();
    }
  }

  function schedule(): void {
    if (scheduled || running || waiting.length === 0) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return (items) => {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      waiting.push({ items, resolve, reject });
      schedule();
    });
  };
}

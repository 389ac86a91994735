// A chore a service repeats while it runs (the group-writer forgetting expired Idempotency-Keys): once at
// start, then on a fixed interval. A failed turn is logged and tried again at the next one; stop() waits
// for a turn in progress, so the pool it uses is never closed under it.
import type { Logger } from './logger';

export interface Chore {
  name: string;
  everyMs: number;
  run: () => Promise<void>;
}

export interface RunningChore {
  stop(): Promise<void>;
}

export function startChore(chore: Chore, logger: Logger): RunningChore {
  let turn: Promise<void> | undefined;
  const runOnce = () => {
    if (turn) return;
    turn = chore
      .run()
      .catch((error: unknown) =>
        logger.warn({ chore: chore.name, err: (error as Error).message }, `${chore.name} failed; trying again in ${chore.everyMs} ms`),
      )
      .finally(() => {
        turn = undefined;
      });
  };
  runOnce();
  const timer = setInterval(runOnce, chore.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await turn;
    },
  };
}

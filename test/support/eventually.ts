// Waiting for an outcome rather than for time: the one polling helper of the tests. A loaded machine
// is slow, so a test states how long it is willing to wait for something to happen, never how long
// it thinks that takes; and no wait outlasts the test's own deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import { boundedWait } from './deadline';

export interface EventuallyOptions {
  /** Names the outcome in the timeout error, e.g. "the writer to catch up". */
  what?: string;
  /** Pause between two checks. */
  intervalMs?: number;
}

/**
 * Checks until `check` returns a truthy value, and resolves with it. A check that throws (a failed
 * expect, a refused connection) counts as not yet; after timeoutMs, or at the test's deadline if that
 * comes first, the last error, or a timeout error naming `what`, is thrown.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  { what = 'the expected outcome', intervalMs = 50 }: EventuallyOptions = {},
): Promise<NonNullable<T>> {
  const bound = boundedWait(timeoutMs);
  const giveUp = Date.now() + bound.ms;
  for (;;) {
    let failure: unknown;
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      failure = error;
    }
    if (Date.now() > giveUp) {
      const limit = bound.byDeadline ? "at the test's deadline" : `after ${timeoutMs} ms`;
      if (failure instanceof Error) failure.message = `${limit}, waiting for ${what}: ${failure.message}`;
      throw failure ?? new Error(`timed out ${limit} waiting for ${what}`);
    }
    await sleep(intervalMs);
  }
}

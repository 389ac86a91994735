// How long a service may take to stop once told to, and so how long every supervisor must wait before
// SIGKILL: compose's stop_grace_period, Kubernetes' terminationGracePeriodSeconds (after the preStop hook)
// and the local launcher. A SIGKILL during the drain resets connections whose requests were still being
// answered. The deployment tests check the grace periods against these figures.

/** A service with no requests in flight to wait for (a writer: finish the batch, commit, close). */
export const DEFAULT_STOP_DEADLINE_MS = 20_000;

/** Closing the Kafka clients, the PostgreSQL pool and Redis once the drain is over. */
const CLOSE_MS = 9000;

/** What a supervisor waits beyond a service's stop deadline, for the process to exit by itself. */
export const KILL_MARGIN_MS = 5000;

/**
 * How long a service that answers requests through the command bus waits for in-flight ones on stop:
 * a command waits up to replyTimeoutMs for its reply, and a second more covers writing the answer.
 */
export function commandDrainMs(replyTimeoutMs: number): number {
  return replyTimeoutMs + 1000;
}

/** Such a service's stop deadline: its drain, then closing its clients (20 s at a 10 s reply timeout). */
export function commandStopDeadlineMs(replyTimeoutMs: number): number {
  return commandDrainMs(replyTimeoutMs) + CLOSE_MS;
}

/** Waits for work to settle, but no longer than `ms`: a stop step that must not hold the stop past its share. */
export async function waitAtMost(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work?.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

// Bounded waiting: nothing in the services waits on a dependency without a limit.

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects with "<what> took longer than <ms> ms" when the promise has not settled in time. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for the promise, or for at most ms; never rejects. */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  await withTimeout(promise, ms, 'waiting').catch(() => undefined);
}

// One deadline per test, set by the tests' environment (deadline-environment.js) when the test's
// function starts: every wait takes at most what is left of it, so a test that runs out of time fails
// in the wait it was in, with that wait's name, never on jest's bare timeout.

declare global {
  var __FLEET_TEST_DEADLINE__: number | undefined;
}

/** Milliseconds left before the running test's deadline; unbounded outside a test (in a hook). */
export function timeLeft(): number {
  const deadline = globalThis.__FLEET_TEST_DEADLINE__;
  return deadline === undefined ? Infinity : Math.max(0, deadline - Date.now());
}

/** A wait's own bound, cut to what is left of the test's time; says which of the two it is. */
export function boundedWait(timeoutMs: number): { ms: number; byDeadline: boolean } {
  const left = timeLeft();
  return left < timeoutMs ? { ms: left, byDeadline: true } : { ms: timeoutMs, byDeadline: false };
}

// The tests' environment: Node's, and one deadline per test. When a test's function starts, its
// deadline is set a little before jest's timeout for it, so that every wait inside the test (which
// takes at most what is left, see deadline.ts) fails first, naming what it waited for, instead of the
// test ending on a bare "Exceeded timeout".
const { TestEnvironment } = require('jest-environment-node');

/** What is kept back from a test's timeout for the failure to be reported and the test to clean up. */
const REPORTING_MARGIN_MS = (timeoutMs) => Math.min(5000, Math.round(timeoutMs / 10));

class DeadlineEnvironment extends TestEnvironment {
  async handleTestEvent(event, state) {
    if (event.name === 'test_fn_start') {
      const timeoutMs = event.test.timeout ?? state.testTimeout;
      this.global.__FLEET_TEST_DEADLINE__ = Date.now() + timeoutMs - REPORTING_MARGIN_MS(timeoutMs);
    } else if (event.name === 'test_fn_success' || event.name === 'test_fn_failure') {
      this.global.__FLEET_TEST_DEADLINE__ = undefined;
    }
  }
}

module.exports = DeadlineEnvironment;

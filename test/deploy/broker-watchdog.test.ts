import { createLogger } from '../../shared/src/logger';
import { watchBroker } from '../../deploy/local/src/broker-watchdog';

const logger = createLogger('test', 'silent');

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe("the launcher's broker watchdog", () => {
  test('starts a dead node again, and nothing while every node runs', async () => {
    let dead: string[] = [];
    const restarts: string[][] = [];
    const watchdog = watchBroker({
      deadNodes: () => dead,
      restart: async () => {
        restarts.push(dead);
        dead = [];
      },
      logger,
      intervalMs: 1000,
    });
    await jest.advanceTimersByTimeAsync(5000);
    expect(restarts).toEqual([]);
    dead = ['node 2'];
    await jest.advanceTimersByTimeAsync(1000);
    expect(restarts).toEqual([['node 2']]);
    await jest.advanceTimersByTimeAsync(5000);
    expect(restarts).toHaveLength(1);
    watchdog.stop();
  });

  test('retries a failed start with a growing pause, and stops trying once stopped', async () => {
    const attempts: number[] = [];
    const watchdog = watchBroker({
      deadNodes: () => ['broker'],
      restart: async () => {
        attempts.push(Date.now());
        throw new Error('Address already in use');
      },
      logger,
      intervalMs: 1000,
      maxPauseMs: 4000,
    });
    await jest.advanceTimersByTimeAsync(1000 + 2000 + 4000 + 4000);
    expect(attempts.map((at) => at - attempts[0]!)).toEqual([0, 2000, 6000, 10_000]);
    watchdog.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(4);
  });
});

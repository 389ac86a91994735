import { createLogger } from '../logger';
import { trackClientOutage } from './client-outage';

function capture() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger('test', 'debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a run of client errors is one outage: logged at error once when it starts and at info once when it ends', () => {
  const { logger, lines } = capture();
  const events: string[] = [];
  const outage = trackClientOutage(logger, { started: () => events.push('started'), ended: () => events.push('ended') }, 5000);

  for (let second = 0; second < 10; second += 1) {
    outage.error({ broker: 'b:9092' }, 'Connection error: connect ECONNREFUSED');
    jest.advanceTimersByTime(1000);
  }
  expect(events).toEqual(['started']);
  jest.advanceTimersByTime(5000);
  expect(events).toEqual(['started', 'ended']);

  const atInfoOrAbove = lines.filter((line) => line.level >= 30).map((line) => line.msg);
  expect(atInfoOrAbove).toEqual([
    'kafka: Connection error: connect ECONNREFUSED (an outage starts; further client errors are logged at debug until it ends)',
    'kafka: the client errors have stopped; the outage is over',
  ]);
  expect(lines.filter((line) => line.level === 20)).toHaveLength(9);
});

test('errors after a quiet period open a new outage', () => {
  const { logger } = capture();
  let started = 0;
  const outage = trackClientOutage(logger, { started: () => (started += 1), ended: () => undefined }, 5000);
  outage.error({}, 'Request timed out');
  jest.advanceTimersByTime(6000);
  outage.error({}, 'Request timed out');
  expect(started).toBe(2);
});

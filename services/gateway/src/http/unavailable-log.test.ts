import type { Logger } from '@fleet/shared/logger';
import { createUnavailableLog, QUIET_MS, REPORT_INTERVAL_MS } from './unavailable-log';

interface Line {
  level: 'warn' | 'info';
  fields: Record<string, unknown>;
  msg: string;
}

function recordingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const record = (level: Line['level']) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  return { logger: { warn: record('warn'), info: record('info') } as unknown as Logger, lines };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a run of 503s is one line when it starts, a count each interval while it lasts, and one line when it is over', () => {
  const { logger, lines } = recordingLogger();
  const log = createUnavailableLog(logger, () => Date.now());
  const context = { requestId: 'r', path: '/p' };

  // 100 requests a second for 25 s.
  for (let tick = 0; tick < 250; tick += 1) {
    for (let request = 0; request < 10; request += 1) log.answered('E-S1/1-01', 'The message broker is unavailable, retry later', context);
    jest.advanceTimersByTime(100);
  }
  jest.advanceTimersByTime(QUIET_MS);

  expect(lines.map((line) => [line.level, line.msg])).toEqual([
    ['warn', 'The message broker is unavailable, retry later (answering 503 E-S1/1-01; counted until it stops)'],
    ['warn', '503 E-S1/1-01: still answered'],
    ['warn', '503 E-S1/1-01: still answered'],
    ['info', '503 E-S1/1-01: no longer answered; the run of them is over'],
  ]);
  expect(lines[1]!.fields).toEqual({ code: 'E-S1/1-01', answered: REPORT_INTERVAL_MS / 10, intervalSeconds: 10 });
  expect(lines[3]!.fields).toMatchObject({ code: 'E-S1/1-01', answered: 2500 });
});

test('each code has a run of its own, and a new run starts with a line again', () => {
  const { logger, lines } = recordingLogger();
  const log = createUnavailableLog(logger);
  log.answered('E-S1/1-01', 'broker', {});
  log.answered('E-S1/1-02', 'reply', {});
  jest.advanceTimersByTime(QUIET_MS);
  log.answered('E-S1/1-01', 'broker', {});
  expect(lines.map((line) => line.msg)).toEqual([
    'broker (answering 503 E-S1/1-01; counted until it stops)',
    'reply (answering 503 E-S1/1-02; counted until it stops)',
    '503 E-S1/1-01: no longer answered; the run of them is over',
    '503 E-S1/1-02: no longer answered; the run of them is over',
    'broker (answering 503 E-S1/1-01; counted until it stops)',
  ]);
});

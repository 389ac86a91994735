import { eventsTable, type EventsRun } from './events-bench';

const run = (p99: number): EventsRun => ({
  startedAt: '2026-11-28T00:00:00.000Z',
  rate: 1000,
  answeredRate: 990,
  positions: 20_000,
  events: 19_000,
  eventsPerSecond: 950,
  delay: { p50: 40, p99, max: p99 + 100 },
  processorCpu: { perPositionUs: 120, core: 0.12 },
  createLatency: { p50: 3.2, p99: 14.5 },
  failures: 0,
});

describe('the events scenario report', () => {
  test('says whether the p99 delay met its goal of a second', () => {
    expect(eventsTable(run(300))).toContain('| receipt to event, p99 | 300 ms | under 1000 ms: met |');
    expect(eventsTable(run(1300))).toContain('| receipt to event, p99 | 1300 ms | under 1000 ms: missed |');
    expect(eventsTable(run(300))).toContain('| event processor CPU per position | 120 µs (12.0% of a core) | |');
  });
});

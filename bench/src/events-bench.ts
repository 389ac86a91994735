// The events scenario's figures: positions posted at a paced rate, each device toggling its ignition with
// every position so that each position after a device's first raises one event; then how many events a
// second were committed, the delay from each position's receipt to its event's commit (an upper bound of
// the delay from the position's commit, which is not recorded), and the processor's CPU per position.

export const EVENTS_SECTION = {
  start: '<!-- events: written by `npm run bench:events` from bench/results/events.json; do not edit by hand -->',
  end: '<!-- end of events -->',
};

/** The goal: an event committed within a second of its position, at 1,000 positions a second. */
export const EVENT_DELAY_P99_GOAL_MS = 1000;

export interface EventsRun {
  startedAt: string;
  /** Positions a second asked. */
  rate: number;
  /** Requests a second answered, whatever the status. */
  answeredRate: number;
  positions: number;
  /** Events committed, and their number a second between the first and the last. */
  events: number;
  eventsPerSecond: number;
  /** From a position's receipt by the gateway to its event's commit, in ms. */
  delay: { p50: number; p99: number; max: number };
  /** The event processor's CPU per position processed, in µs, and its share of a core over the window. */
  processorCpu: { perPositionUs: number; core: number };
  /** Create latency seen by the client, in ms. */
  createLatency: { p50: number; p99: number };
  /** Requests answered with anything but 200, or not at all. */
  failures: number;
}

export function eventsTable(run: EventsRun): string {
  const met = run.delay.p99 <= EVENT_DELAY_P99_GOAL_MS;
  return [
    `Run of ${run.startedAt}: ${run.positions} positions asked at ${run.rate} a second, answered at ` +
      `${run.answeredRate.toFixed(0)} a second, ${run.failures} not answered 200.`,
    '',
    '| figure | value | goal |',
    '|---|---:|---|',
    `| events committed a second | ${run.eventsPerSecond.toFixed(0)} (${run.events} in all) | one per position after a device's first |`,
    `| receipt to event, p50 | ${run.delay.p50.toFixed(0)} ms | |`,
    `| receipt to event, p99 | ${run.delay.p99.toFixed(0)} ms | under ${EVENT_DELAY_P99_GOAL_MS} ms: ${met ? 'met' : 'missed'} |`,
    `| receipt to event, max | ${run.delay.max.toFixed(0)} ms | |`,
    `| event processor CPU per position | ${run.processorCpu.perPositionUs.toFixed(0)} µs (${(run.processorCpu.core * 100).toFixed(1)}% of a core) | |`,
    `| trip create latency p50 / p99 | ${run.createLatency.p50.toFixed(1)} / ${run.createLatency.p99.toFixed(1)} ms | |`,
  ].join('\n');
}

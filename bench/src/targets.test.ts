import type { CpuPerRequest } from './process-cpu';
import type { ScenarioResult } from './bench-types';
import { benchTargets } from './targets';

const cpu = (gateway: number): CpuPerRequest => ({
  gateway,
  'trip-writer': null,
  'group-writer': null,
  'event-processor': null,
  broker: null,
  postgres: null,
  loadGenerator: null,
  total: gateway,
});

/** A scenario measured beside hello-world runs of 1,000 req/s with a p99 of 10 ms. */
const scenario = (name: string, ratio: number, overrides: Partial<ScenarioResult> = {}): ScenarioResult => ({
  name,
  requestsPerSecond: ratio * 1000,
  p50Ms: 5,
  p99Ms: 10,
  errors: 0,
  baseline: { requestsPerSecond: 1000, p99Ms: 10 },
  ratio,
  cpuMicrosPerRequest: cpu(100),
  ...overrides,
});

const run = (overrides: Record<string, Partial<ScenarioResult>> = {}) =>
  [
    scenario('hello-world (baseline)', 1),
    scenario('naive INSERT per request', 0.3),
    scenario('category read, warm cache', 0.95),
    scenario('trip create, JSON', 0.5, { cpuMicrosPerRequest: cpu(200), p99Ms: 30 }),
    scenario('trip batch, 100 positions', 0.04, { positionsPerSecond: 4000 }),
    scenario('trip batch, 100 devices', 0.024, { positionsPerSecond: 2400 }),
    scenario('last-location read', 0.7),
    scenario('history page, one device one day', 0.6, { p99Ms: 19 }),
  ].map((s) => ({ ...s, ...overrides[s.name] }));

const verdicts = (scenarios: ScenarioResult[], gatewayRssMiB: number | null = 160) =>
  Object.fromEntries(benchTargets({ scenarios, gatewayRssMiB }).map((t) => [t.what, t.met]));

test('a run exactly at every goal meets them all', () => {
  expect(Object.values(verdicts(run())).every(Boolean)).toBe(true);
  expect(Object.keys(verdicts(run()))).toEqual([
    'category read / hello-world',
    'trip create / hello-world',
    'gateway CPU per trip create / hello-world CPU per request',
    'trip create / naive design',
    'errors, all scenarios',
    'trip create p99 / hello-world p99',
    'trip batch positions/s / trip create req/s',
    'trip batch of 100 devices positions/s / trip batch of one device positions/s',
    'last-location read / hello-world',
    'history page p99 (ms)',
    'gateway peak RSS (MiB)',
  ]);
});

test('each goal is missed by a run just past it', () => {
  const missed = (overrides: Record<string, Partial<ScenarioResult>>, gatewayRssMiB = 160) =>
    Object.entries(verdicts(run(overrides), gatewayRssMiB))
      .filter(([, met]) => !met)
      .map(([what]) => what);
  expect(missed({ 'category read, warm cache': { ratio: 0.89 } })).toEqual(['category read / hello-world']);
  expect(missed({ 'trip create, JSON': { cpuMicrosPerRequest: cpu(201) } })).toEqual([
    'gateway CPU per trip create / hello-world CPU per request',
  ]);
  expect(missed({ 'naive INSERT per request': { ratio: 0.4 } })).toEqual(['trip create / naive design']);
  expect(missed({ 'trip create, JSON': { p99Ms: 31 } })).toEqual(['trip create p99 / hello-world p99']);
  expect(missed({ 'trip batch, 100 positions': { positionsPerSecond: 3999 } })).toEqual(['trip batch positions/s / trip create req/s']);
  expect(missed({ 'trip batch, 100 devices': { positionsPerSecond: 2399 } })).toEqual([
    'trip batch of 100 devices positions/s / trip batch of one device positions/s',
  ]);
  expect(missed({ 'history page, one device one day': { p99Ms: 20 } })).toEqual(['history page p99 (ms)']);
  expect(missed({ 'last-location read': { errors: 1 } })).toEqual(['errors, all scenarios']);
  expect(missed({}, 161)).toEqual(['gateway peak RSS (MiB)']);
});

test('the comparison with the run before partitioning and the RSS appear only when measured', () => {
  const whats = (gatewayRssMiB: number | null, tripCreateBefore?: { ratio: number }) =>
    benchTargets({ scenarios: run(), gatewayRssMiB, tripCreateBefore }).map((t) => t.what);
  expect(whats(null)).not.toContain('gateway peak RSS (MiB)');
  const before = benchTargets({ scenarios: run(), gatewayRssMiB: null, tripCreateBefore: { ratio: 0.6 } }).find((t) =>
    t.what.includes('before partitioning'),
  );
  expect(before).toMatchObject({ value: 0.5 / 0.6, met: false });
  expect(whats(null)).toHaveLength(10);
});

test("the live streams' figures are reported against no goal, the CPU per event as the gateway's beyond a plain create", () => {
  const live = scenario('trip create, followed live on 100 streams', 0.45, {
    cpuMicrosPerRequest: cpu(230),
    streamDelay: { events: 5000, p50Ms: 2, p99Ms: 40 },
  });
  const reported = benchTargets({ scenarios: [...run(), live], gatewayRssMiB: null }).filter((t) => t.what.startsWith('live stream'));
  expect(reported).toEqual([
    { what: 'live stream: from the 200 to the event, p50 (ms)', value: 2, target: 'none set', met: null },
    { what: 'live stream: from the 200 to the event, p99 (ms)', value: 40, target: 'none set', met: null },
    { what: 'live stream: gateway CPU per delivered event (µs), beyond the create', value: 230 - 200, target: 'none set', met: null },
  ]);
});

test('the scale-out steps are held to 1 + 1 in whole-system CPU per create, the load generator left out', () => {
  // 200 µs a create in the stack and the broker, 100 in the load generator, whatever the step.
  const step = (name: string, system: number, load = 100) =>
    scenario(name, 0.2, { cpuMicrosPerRequest: { ...cpu(system), loadGenerator: load, total: system + load } });
  const verdict = (two: number, four: number) =>
    Object.fromEntries(
      benchTargets({
        scenarios: [
          ...run(),
          step('scale-out: 1 gateway + 1 trip-writer, trip create JSON', 200),
          step('scale-out: 2 gateways + 2 trip-writers, trip create JSON', two, 500),
          step('scale-out: 4 gateways + 4 trip-writers, trip create JSON', four, 900),
        ],
        gatewayRssMiB: null,
      })
        .filter((t) => t.what.includes('whole-system CPU'))
        .map((t) => [t.what, t.met]),
    );
  expect(verdict(230, 260)).toEqual({
    'scale-out 2+2 / 1+1 whole-system CPU per trip create': true,
    'scale-out 4+4 / 1+1 whole-system CPU per trip create': true,
  });
  expect(verdict(231, 261)).toEqual({
    'scale-out 2+2 / 1+1 whole-system CPU per trip create': false,
    'scale-out 4+4 / 1+1 whole-system CPU per trip create': false,
  });
});

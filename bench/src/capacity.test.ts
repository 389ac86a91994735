import { capacityModel, capacityPlan, PLANNED_UTILISATION, type PerCore } from './capacity';
import type { CpuPerRequest } from './process-cpu';
import type { ScenarioResult } from './bench-types';

const cpu = (parts: Partial<CpuPerRequest>): CpuPerRequest => ({
  gateway: null,
  'trip-writer': null,
  'group-writer': null,
  'event-processor': null,
  broker: null,
  postgres: null,
  loadGenerator: null,
  total: 0,
  ...parts,
});

const scenario = (name: string, perRequest: Partial<CpuPerRequest>, perPosition?: Partial<CpuPerRequest>) =>
  ({
    name,
    cpuMicrosPerRequest: cpu(perRequest),
    ...(perPosition ? { cpuMicrosPerPosition: cpu(perPosition) } : {}),
  }) as ScenarioResult;

test('a part spending 500 µs a position stores 2,000 positions a second on one core', () => {
  const model = capacityModel(
    [
      scenario('hello-world (baseline)', { gateway: 100 }),
      scenario('trip create, JSON', { gateway: 500, 'trip-writer': 250, 'event-processor': 50, broker: 1000, postgres: 100 }),
      scenario('trip batch, 100 positions', { gateway: 10_000 }, { gateway: 100, 'trip-writer': 40, broker: null, postgres: 20 }),
    ],
    200,
    100,
  );
  expect(model.singlePosts).toEqual({ gateway: 2000, 'trip-writer': 4000, 'event-processor': 20_000, broker: 1000, postgres: 10_000 });
  expect(model.batches).toEqual({ gateway: 10_000, 'trip-writer': 25_000, 'event-processor': null, broker: null, postgres: 50_000 });
  expect(model.plans.map((plan) => plan.positionsPerSecond)).toEqual([1_000, 10_000, 100_000]);
});

test('a plan keeps each part at most PLANNED_UTILISATION busy, and gives the writers twice their number of partitions', () => {
  const perCore: PerCore = { gateway: 2000, 'trip-writer': 4000, 'event-processor': 20_000, broker: 1000, postgres: 10_000 };
  const plan = capacityPlan(10_000, perCore, 200);
  // 10,000 / 2,000 = 5 cores of gateway work; at 70% that is 7.1, so 8 gateways.
  expect(plan).toEqual({
    positionsPerSecond: 10_000,
    devices: 100_000,
    gateways: 8,
    tripWriters: 4,
    // 10,000 / 20,000 / 70%: 0.7 of a core, one event processor.
    eventProcessors: 1,
    partitions: 12,
    brokerCores: 15,
    postgresCores: 2,
    storageGiBPerDay: (10_000 * 86_400 * 200) / 2 ** 30,
  });
  expect(plan.positionsPerSecond / perCore.gateway! / plan.gateways <= PLANNED_UTILISATION).toBe(true);
  expect(capacityPlan(100_000, perCore, 200).partitions).toBe(2 * capacityPlan(100_000, perCore, 200).tripWriters);
});

test('a part the run did not measure needs no process of its own beyond one, and unknown storage stays unknown', () => {
  const plan = capacityPlan(
    1_000,
    { gateway: null, 'trip-writer': null, 'event-processor': null, broker: null, postgres: null },
    undefined,
  );
  expect(plan).toMatchObject({ gateways: 1, tripWriters: 1, eventProcessors: 1, brokerCores: 1, postgresCores: 1, storageGiBPerDay: null });
});

test('event processors are planned from their own cost, and the topics get twice as many partitions as the larger group', () => {
  // Every position is read by an event processor as well as written by a trip-writer: a fleet whose
  // event processors cost more a position than its trip-writers needs more of them, and the positions
  // topic (as many partitions as the trip topic) must hold one each.
  const perCore: PerCore = { gateway: 20_000, 'trip-writer': 20_000, 'event-processor': 5000, broker: 10_000, postgres: 50_000 };
  const plan = capacityPlan(100_000, perCore, 200);
  // 100,000 / 5,000 = 20 cores of event processing; at 70% that is 28.6, so 29 processes.
  expect(plan.eventProcessors).toBe(29);
  expect(plan.tripWriters).toBe(8);
  expect(plan.partitions).toBe(58);
});

import { PLANNED_UTILISATION } from './capacity';
import type { QuietPart } from './quiet-fleet';
import { fittedPlan, partFits, planningCosts, replicationTable, type ReplicationReport, type SystemStep } from './replication';

const parts = (values: Partial<Record<QuietPart, number | null>>): Record<QuietPart, number | null> => ({
  gateway: null,
  'trip-writer': null,
  'group-writer': null,
  teltonika: null,
  'event-processor': null,
  broker: null,
  postgres: null,
  ...values,
});

const systemStep = (rate: number, createsPerSecond: number, broker: number, gateway: number): SystemStep => ({
  rate,
  createsPerSecond,
  errors: 0,
  p99Ms: 40,
  cores: parts({ broker, gateway }),
  totalCores: broker + gateway,
  brokerMicrosPerCreate: (broker * 1e6) / createsPerSecond,
  totalMicrosPerCreate: ((broker + gateway) * 1e6) / createsPerSecond,
  requestsPerCreate: { Produce: 1.9, Fetch: 1.8 },
});

test('each part is fitted on the creates a second answered, not asked, and a part never found has no fit', () => {
  // The broker: 10% of a core fixed plus 200 µs a create, at the rates answered (the last step fell short).
  const steps = [systemStep(500, 500, 0.2, 0.3), systemStep(1500, 1500, 0.4, 0.7), systemStep(3000, 2000, 0.5, 0.9)];
  const fits = partFits(steps);
  expect(fits.broker!.fixedCores).toBeCloseTo(0.1, 6);
  expect(fits.broker!.perCreateMicros).toBeCloseTo(200, 6);
  expect(fits.postgres).toBeUndefined();
});

test('a part whose CPU did not rise with the rate is planned at its cost per create at the highest rate, not from a slope below zero', () => {
  // The broker: 0.7 cores at 250 a second, 0.6 at 500, 0.9 at 900 answered; the gateway rises with the rate.
  const steps = [systemStep(250, 250, 0.7, 0.2), systemStep(500, 500, 0.6, 0.35), systemStep(1000, 900, 0.9, 0.6)];
  const costs = planningCosts(steps);
  expect(partFits(steps).broker!.perCreateMicros).toBeGreaterThan(0);
  const falling = [systemStep(250, 250, 0.7, 0.2), systemStep(500, 500, 0.6, 0.35), systemStep(1000, 1000, 0.4, 0.6)];
  expect(partFits(falling).broker!.perCreateMicros).toBeLessThan(0);
  expect(planningCosts(falling).broker).toEqual({ fixedCores: 0, perCreateMicros: 400, basis: 'highest rate' });
  expect(planningCosts(falling).gateway!.basis).toBe('fitted');
  expect(costs.broker!.basis).toBe('fitted');
});

test('a fitted plan pays each part its fixed cost and its cost per create, and says when it extrapolates', () => {
  const fits = {
    gateway: { fixedCores: 0.05, perCreateMicros: 650 },
    'trip-writer': { fixedCores: 0.02, perCreateMicros: 300 },
    'event-processor': { fixedCores: 0.01, perCreateMicros: 100 },
    broker: { fixedCores: 0.2, perCreateMicros: 400 },
    postgres: { fixedCores: 0.01, perCreateMicros: 100 },
  };
  const plan = fittedPlan(10_000, fits, 3000);
  // 10,000 creates at 650 µs is 6.5 cores of gateway work; each process carries 70% minus its 5% fixed.
  expect(PLANNED_UTILISATION).toBe(0.7);
  expect(plan.gateways).toBe(10);
  // The broker scales by cores: (0.2 + 4) / 0.7 = 6.
  expect(plan.brokerCores).toBe(6);
  // 10,000 creates at 100 µs is one core of event processing; each process carries 70% minus its 1%: two.
  expect(plan.eventProcessors).toBe(2);
  expect(plan.measured).toBe(false);
  expect(fittedPlan(1000, fits, 3000)).toMatchObject({
    measured: true,
    gateways: 1,
    tripWriters: 1,
    eventProcessors: 1,
    brokerCores: 1,
    postgresCores: 1,
  });
});

test("the table sets the system's broker CPU per create beside Kafka's per record at each rate, with the goal", () => {
  const system = [systemStep(500, 500, 0.6, 0.3), systemStep(1500, 1480, 0.9, 0.7)];
  const report: ReplicationReport = {
    startedAt: '2026-11-28T07:00:00.000Z',
    secondsPerStep: 20,
    shapes: [
      {
        nodes: 3,
        idleBrokerCores: 0.12,
        restCores: parts({ broker: 0.2, gateway: 0.01 }),
        restRequestsPerSecond: { Fetch: 12, Heartbeat: 3 },
        kafka: [
          { rate: 500, recordsPerSecond: 500, records: 10_000, p99Ms: 20, brokerMicrosPerRecord: 400, brokerCores: 0.2 },
          { rate: 1500, recordsPerSecond: 1500, records: 30_000, p99Ms: 25, brokerMicrosPerRecord: 300, brokerCores: 0.45 },
        ],
        system,
        kafkaBrokerFit: { fixedCores: 0.075, perCreateMicros: 250 },
        systemBrokerFit: { fixedCores: 0.45, perCreateMicros: 300 },
        systemFit: { fixedCores: 0.5, perCreateMicros: 800 },
        partFits: partFits(system),
      },
    ],
  };
  const table = replicationTable(report);
  // 0.6 cores over 500 creates is 1,200 µs a create, 3.0× Kafka's 400; 0.9 over 1,480 is 608 µs, 2.0× its 300.
  expect(table).toContain('| 3 | 500 | 500 | 400 | 500 | 1,200 | 3.0× |');
  expect(table).toContain("- 3 nodes at 500 a second: broker CPU per create 3.0× Kafka's per record (goal <= 3×): met");
  expect(table).toContain('| 3 | 1,500 | 1,500 | 300 | 1,480 | 608 | 2.0× |');
  expect(table).toContain('Produce 1.90, Fetch 1.80');
  expect(table).toMatch(/\| 100,000 \| extrapolated \|/);
});

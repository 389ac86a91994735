import { fitQuietFleet, quietFleetTable, type QuietFleetStep } from './quiet-fleet';

const step = (rate: number, totalCores: number, gateway: number | null = totalCores / 2): QuietFleetStep => ({
  rate,
  seconds: 20,
  answered: rate * 20,
  errors: 0,
  p99Ms: rate === 0 ? null : 12,
  cores: {
    gateway,
    'trip-writer': totalCores / 4,
    'group-writer': 0,
    broker: totalCores / 4,
    postgres: 0,
    teltonika: 0,
    'event-processor': 0,
  },
  totalCores,
});

describe('the quiet fleet', () => {
  test('fits a fixed cost and a cost per create from the steps', () => {
    const fit = fitQuietFleet([step(0, 0.05), step(50, 0.1), step(150, 0.2), step(500, 0.55)]);
    expect(fit.fixedCores).toBeCloseTo(0.05, 9);
    expect(fit.perCreateMicros).toBeCloseTo(1000, 6);
  });

  test('reports each step and says which target each step met or missed', () => {
    const steps = [step(0, 0.05), step(50, 0.35, null)];
    const table = quietFleetTable({ startedAt: '2026-11-27T00:00:00.000Z', steps, fit: fitQuietFleet(steps) });
    expect(table).toContain('| at rest | 2.5% | 1.3% | 0.0% | 1.3% | 0.0% | 0.0% | 0.0% | 5.0% |  |  | 0 |');
    expect(table).toContain('| 50 creates/s | n/a | 8.8% | 0.0% | 8.8% | 0.0% | 0.0% | 0.0% | 35.0% | 7000 | 12 | 0 |');
    expect(table).toContain('- at rest: 5.0% (goal <= 10.0%): met');
    expect(table).toContain('- 50 creates a second: 35.0% (goal <= 30.0%): MISSED');
  });

  test('gives the cost of a create at 50 a second as a multiple of the host yardstick measured in the same run', () => {
    const steps = [step(0, 0.05), step(50, 0.3)];
    const yardstick = { rate: 50, microsPerRequest: 400 };
    const table = quietFleetTable({ startedAt: '2026-11-27T00:00:00.000Z', steps, fit: fitQuietFleet(steps), yardstick });
    // 0.3 of a core over 50 creates a second is 6,000 µs a create: 15 requests of the bare server.
    expect(table).toContain(
      'Host yardstick, in this run: a bare express server used 400 µs of CPU a request at 50 requests a second; a create at 50 a second cost the stack 15.0 times that.',
    );
  });
});

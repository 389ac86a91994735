import { geofenceCostTable, type GeofenceCostRun } from './geofence-cost';

const run = (worst: number): GeofenceCostRun => ({
  startedAt: '2026-12-08T00:00:00.000Z',
  rate: 500,
  seconds: 10,
  none: 200,
  worst,
  geofences: 10_000,
  failures: 0,
});

describe('the geofence cost report', () => {
  test('says whether the worst set cost a fix at most ten times what none does', () => {
    expect(geofenceCostTable(run(1800))).toContain('| worst set against none | 9.0× | at most 10×: met |');
    expect(geofenceCostTable(run(2400))).toContain('| worst set against none | 12.0× | at most 10×: missed |');
    expect(geofenceCostTable(run(1800))).toContain('| the worst set the limits allow (10000 geofences, every box the globe) | 1800 µs | |');
  });
});

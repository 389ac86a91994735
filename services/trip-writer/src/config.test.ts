import { writerConfig } from './config';

const env = (overrides: Record<string, string> = {}) => ({ KAFKA_BROKERS: 'kafka:9092', ...overrides });

describe('the trip-writer configuration of partitions', () => {
  it('by default keeps a week of partitions ahead, checks hourly and keeps every day', () => {
    const config = writerConfig(env());
    expect(config.TRIP_PARTITIONS_AHEAD_DAYS).toBe(7);
    expect(config.TRIP_PARTITION_MAINTENANCE_INTERVAL_MS).toBe(3_600_000);
    expect(config.TRIP_RETENTION_DAYS).toBeUndefined();
  });

  it('reads an empty TRIP_RETENTION_DAYS, as a compose file writes an unset one, as keeping every day', () => {
    expect(writerConfig(env({ TRIP_RETENTION_DAYS: '' })).TRIP_RETENTION_DAYS).toBeUndefined();
    expect(writerConfig(env({ TRIP_RETENTION_DAYS: '90' })).TRIP_RETENTION_DAYS).toBe(90);
  });

  it.each([
    ['TRIP_RETENTION_DAYS', '0'],
    ['TRIP_RETENTION_DAYS', 'forever'],
    ['TRIP_PARTITIONS_AHEAD_DAYS', '3'],
    ['TRIP_PARTITION_MAINTENANCE_INTERVAL_MS', '10'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => writerConfig(env({ [name]: value }))).toThrow(new RegExp(`invalid configuration: ${name}: `));
  });
});

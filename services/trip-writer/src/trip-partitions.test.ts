import { expiredDays } from './partition-maintenance';
import { addDays, dayOf, dayOfPartition, partitionName, startOfDay } from './trip-partitions';

describe('daily partition names and bounds', () => {
  it('reads the UTC day of an instant, whatever offset it was written with', () => {
    expect(dayOf('2026-11-23T23:59:59.999Z')).toBe('2026-11-23');
    expect(dayOf('2026-11-24T00:00:00.000Z')).toBe('2026-11-24');
    expect(dayOf(new Date('2026-11-24T06:00:00+07:00'))).toBe('2026-11-23');
  });

  it('has no day for text that is no instant', () => {
    expect(dayOf('not a time')).toBeUndefined();
  });

  it('counts days across months, leap years and years', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
  });

  it('names a partition after its day, and reads the day back from the name', () => {
    expect(partitionName('2026-11-23')).toBe('trip_locations_p20261123');
    expect(dayOfPartition('trip_locations_p20261123')).toBe('2026-11-23');
    expect(dayOfPartition('trip_locations_p2026112')).toBeUndefined();
    expect(dayOfPartition('trip_locations_unpartitioned')).toBeUndefined();
  });

  it('refuses to name or bound anything that is not a day', () => {
    expect(() => partitionName("2026-11-23'); DROP TABLE trip_locations; --")).toThrow('not a day');
    expect(() => startOfDay('2026-11-23T00:00')).toThrow('not a day');
  });
});

describe('expiredDays', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const days = ['2026-10-23', '2026-10-24', '2026-10-25', '2026-11-23', '2026-11-30'];

  it('without a retention, expires nothing', () => {
    expect(expiredDays(days, now, undefined)).toEqual([]);
  });

  it('expires a day only once all of it is older than the retention', () => {
    // 30 days before now is 2026-10-24T10:00Z: the 24th has not ended by then, the 23rd has.
    expect(expiredDays(days, now, 30)).toEqual(['2026-10-23']);
    expect(expiredDays(days, new Date('2026-11-24T00:00:00Z'), 30)).toEqual(['2026-10-23', '2026-10-24']);
  });
});

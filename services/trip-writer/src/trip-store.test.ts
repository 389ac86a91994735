import { inLockOrder } from './trip-store';

const trip = (imei: string, gpsTime: string, speed = 0) => ({
  imei,
  gpsTime,
  latitude: 0,
  longitude: 0,
  speed,
  ignition: true,
  receivedAt: '2026-11-22T08:30:00.000Z',
});

test('a batch is ordered by device, then time, keeping the first of two commands for one position first', () => {
  const batch = [
    trip('b', '2026-11-22T08:30:01.000Z'),
    trip('a', '2026-11-22T08:30:02.000Z', 1),
    trip('b', '2026-11-22T08:30:00.000Z'),
    trip('a', '2026-11-22T08:30:02.000Z', 2),
  ];
  expect(inLockOrder(batch)).toEqual([batch[1], batch[3], batch[2], batch[0]]);
  expect(batch[0]!.imei).toBe('b');
});

// deviceOffline is decided on what was received and committed, not on what the event processor has
// caught up to: a processor lagging (or back from an outage) finds its own states stale for devices
// that never stopped posting, and must not raise a false deviceOffline (and deviceOnline after it).
import { sweepOffline } from '../../services/event-processor/src/event-store';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

let database: PrivateDatabase;

beforeAll(async () => {
  database = await privateDatabase('offline-sweep');
});
afterAll(async () => {
  await database?.drop();
});

/** A device the processor last saw `processedAgoS` ago, whose newest committed receipt was `committedAgoS` ago. */
async function device(imei: string, processedAgoS: number, committedAgoS: number | undefined): Promise<void> {
  await database.pool.query(
    `INSERT INTO event_device_states (imei, last_position_id, last_gps_time, last_received_at, latitude, longitude)
     VALUES ($1, 1, now() - make_interval(secs => $2), now() - make_interval(secs => $2), -6.2, 106.8)`,
    [imei, processedAgoS],
  );
  if (committedAgoS === undefined) return;
  await database.pool.query(
    `INSERT INTO device_last_locations (imei, trip_location_id, gps_time, latitude, longitude, speed, ignition, received_at, last_seen_at)
     VALUES ($1, 2, now() - make_interval(secs => $2), -6.2, 106.8, 10, true, now() - make_interval(secs => $2), now() - make_interval(secs => $2))`,
    [imei, committedAgoS],
  );
}

test('a device still posting while the processor lags is not marked offline; one silent by both counts is, with its newest receipt', async () => {
  await device('356938035640001', 60, 1); // the processor is a minute behind a device posting every second
  await device('356938035640002', 60, 50); // silent for 50 s, by what was committed
  await device('356938035640003', 60, undefined); // known to the processor alone

  expect(await sweepOffline(database.pool, 30_000)).toEqual({ raised: 2, deliveries: 0 });

  const { rows } = await database.pool.query<{ imei: string; offline: boolean }>(
    'SELECT imei, offline FROM event_device_states ORDER BY imei',
  );
  expect(rows.map((row) => [row.imei, row.offline])).toEqual([
    ['356938035640001', false],
    ['356938035640002', true],
    ['356938035640003', true],
  ]);
  const events = await database.pool.query<{ imei: string; received: Date }>(
    "SELECT imei, (attributes->>'lastReceivedAt')::timestamptz AS received FROM events WHERE type = 'deviceOffline' ORDER BY imei",
  );
  expect(events.rows.map((row) => row.imei)).toEqual(['356938035640002', '356938035640003']);
  // The committed receipt, 50 s ago, not the processor's 60.
  const committed = await database.pool.query<{ seen: Date }>(
    "SELECT last_seen_at AS seen FROM device_last_locations WHERE imei = '356938035640002'",
  );
  expect(events.rows[0]!.received).toEqual(committed.rows[0]!.seen);
});

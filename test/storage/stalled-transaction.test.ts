// A service frozen or stalled inside a transaction (SIGSTOP, a paused host) held its row locks for as
// long as it stayed so: an event processor frozen mid-batch kept its devices' states locked, and the
// member that took its partitions waited on them until it woke. The services' connections now ask the
// server to end a session left idle inside a transaction, which rolls it back and frees its locks.
import { connectPool, IDLE_IN_TRANSACTION_TIMEOUT_MS } from '@fleet/shared/db/pool';
import { createLogger } from '@fleet/shared/logger';
import { closeDb, db, testServers, uniqueImei } from '../support/harness';

afterAll(() => closeDb());

test("a service's connection left idle inside a transaction is ended by the server, and the rows it locked are free", async () => {
  const pool = await connectPool(
    { DATABASE_URL: testServers().databaseUrl, DATABASE_POOL_SIZE: 1 },
    'stalled-test',
    createLogger('tests', 'silent'),
  );
  const imei = uniqueImei();
  await db().query(
    'INSERT INTO event_device_states (imei, last_position_id, last_gps_time, last_received_at, latitude, longitude) VALUES ($1, 1, now(), now(), 0, 0)',
    [imei],
  );
  const stalled = await pool.connect();
  // The server's FATAL message, then the socket's end: each is an error event, the first the one looked at.
  const ended = new Promise<Error>((resolve) => stalled.on('error', resolve));
  try {
    await stalled.query('BEGIN');
    await stalled.query('SELECT 1 FROM event_device_states WHERE imei = $1 FOR UPDATE', [imei]);

    // Another process asks for the same row, as the member given the stalled one's partitions does; it
    // would give up after three times the timeout.
    const other = await db().connect();
    try {
      await other.query('BEGIN');
      await other.query(`SET LOCAL lock_timeout = '${IDLE_IN_TRANSACTION_TIMEOUT_MS * 3}ms'`);
      const locked = await other.query('SELECT imei FROM event_device_states WHERE imei = $1 FOR UPDATE', [imei]);
      expect(locked.rows).toEqual([{ imei }]);
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    expect((await ended).message).toContain('idle-in-transaction timeout');
  } finally {
    stalled.release(true);
    await pool.end();
    await db().query('DELETE FROM event_device_states WHERE imei = $1', [imei]);
  }
});

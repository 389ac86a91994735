// A bounded overload: one device posts at twenty times its rate limit beside fifty healthy devices.
// Every healthy device's positions are stored, the noisy one is answered 429 past its limit, and no
// request gets a 5xx. Each device has a token of its own, as devices in the field do.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { buildTrip, closeDb, db, postJson, TEST_JWT_SECRET, uniqueImei, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const PER_MINUTE = 10;
const BURST = 10;
/** Let through at once; the next burst a minute later (BURST / PER_MINUTE). */
const ALLOWED = BURST;
const NOISY_POSTS = 20 * ALLOWED;
const HEALTHY_DEVICES = 50;
const HEALTHY_POSTS = 5;
/** Requests the noisy device has in flight at once. */
const NOISY_CONCURRENCY = 10;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'noisy-device',
    env: {
      RATE_LIMIT_DEVICE_PER_MINUTE: String(PER_MINUTE),
      RATE_LIMIT_DEVICE_BURST: String(BURST),
      // Every limit must be counted even on a loaded machine (see rate-limits.test.ts).
      RATE_LIMIT_REDIS_TIMEOUT_MS: '5000',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function deviceToken(): Promise<{ authorization: string }> {
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(`device-${randomUUID()}`)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
  return { authorization: `Bearer ${token}` };
}

async function storedPerImei(imeis: string[]): Promise<Map<string, number>> {
  const result = await db().query<{ imei: string; count: string }>(
    'SELECT imei, count(*) FROM trip_locations WHERE imei = ANY($1::text[]) GROUP BY imei',
    [imeis],
  );
  return new Map(result.rows.map((row) => [row.imei, Number(row.count)]));
}

test('one device at 20x its limit beside 50 healthy devices: every healthy post is stored, the noisy device gets 429s, nothing gets a 5xx', async () => {
  const noisy = { imei: uniqueImei(), auth: await deviceToken() };
  const healthy = await Promise.all(
    Array.from({ length: HEALTHY_DEVICES }, async () => ({ imei: uniqueImei(), auth: await deviceToken() })),
  );

  let noisySent = 0;
  const noisyStatuses: number[] = [];
  const noisyWorker = async () => {
    while (noisySent < NOISY_POSTS) {
      noisySent += 1;
      noisyStatuses.push((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei: noisy.imei }), noisy.auth)).status);
    }
  };
  const healthyStatuses: number[] = [];
  const healthyDevice = async (device: { imei: string; auth: { authorization: string } }) => {
    for (let sent = 0; sent < HEALTHY_POSTS; sent += 1) {
      healthyStatuses.push((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei: device.imei }), device.auth)).status);
    }
  };
  await Promise.all([...Array.from({ length: NOISY_CONCURRENCY }, noisyWorker), ...healthy.map(healthyDevice)]);

  expect(healthyStatuses).toEqual(Array(HEALTHY_DEVICES * HEALTHY_POSTS).fill(200));
  expect(noisyStatuses).toHaveLength(NOISY_POSTS);
  expect(noisyStatuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  const noisyAccepted = noisyStatuses.filter((status) => status === 200).length;
  // Its burst, and one more window's should the run straddle the end of its window.
  expect(noisyAccepted).toBeGreaterThanOrEqual(ALLOWED);
  expect(noisyAccepted).toBeLessThanOrEqual(2 * ALLOWED);

  const stored = await storedPerImei([noisy.imei, ...healthy.map((device) => device.imei)]);
  for (const device of healthy)
    expect({ imei: device.imei, stored: stored.get(device.imei) }).toEqual({ imei: device.imei, stored: HEALTHY_POSTS });
  expect(stored.get(noisy.imei)).toBe(noisyAccepted);
});

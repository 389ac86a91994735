// The rate limits of the write routes, over HTTP against the real stack: per device (counted per
// position, on the single and the batch routes) and per token subject, shared by every gateway through
// Redis. A refused request answers 429 with the draft's RateLimit headers and stores and publishes
// nothing; 0 turns a limit off.
import { randomUUID } from 'node:crypto';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import {
  buildGroup,
  buildTrip,
  closeDb,
  commandsPublishedSettled,
  db,
  postJson,
  signToken,
  uniqueDeviceImei,
  uniqueImei,
  type Stack,
} from '../support/harness';
import { closeKafka } from '../support/kafka';
import {
  DEVICES_PATH,
  GEOFENCES_PATH,
  TRIP_LOCATION_BATCH_PATH,
  TRIP_LOCATION_PATH,
  VEHICLE_GROUP_PATH,
} from '../../services/gateway/src/http/routes';
import { squareGeofence } from '../support/geofence-areas';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const BATCH = TRIP_LOCATION_BATCH_PATH;
const GROUP = VEHICLE_GROUP_PATH;

// A device may send 5 positions at once (its burst), then 3 a minute: the next 5 after 100 s.
const DEVICE_PER_MINUTE = 3;
const DEVICE_BURST = 5;
/** The burst goes through at once; the next one after the time the rate takes to send as many. */
const DEVICE_WINDOW_SECONDS = (DEVICE_BURST * 60) / DEVICE_PER_MINUTE;
const SUBJECT_PER_SECOND = 1;
const SUBJECT_BURST = 2;
// The subject limit is tried on a gateway of its own, so that it never refuses the device tests' posts.
const deviceLimits = {
  RATE_LIMIT_DEVICE_PER_MINUTE: String(DEVICE_PER_MINUTE),
  RATE_LIMIT_DEVICE_BURST: String(DEVICE_BURST),
  RATE_LIMIT_SUBJECT_PER_SECOND: '0',
  // A loaded machine may take Redis past the 500 ms default, and a limit Redis does not answer for in
  // time is let through (see the outage test): here every answer must count.
  RATE_LIMIT_REDIS_TIMEOUT_MS: '5000',
};

let stack: Stack;
const otherGateways: Gateway[] = [];

/** A token of a subject of its own, so that the subject limit of one test does not refuse another's posts. */
async function bearerFor(subject = `device-${randomUUID()}`): Promise<{ authorization: string }> {
  return { authorization: `Bearer ${await signToken({}, { subject })}` };
}

async function storedFor(imeis: string[]): Promise<number> {
  const result = await db().query<{ count: string }>('SELECT count(*) FROM trip_locations WHERE imei = ANY($1::text[])', [imeis]);
  return Number(result.rows[0]!.count);
}

async function anotherGateway(overrides: Record<string, string> = {}): Promise<Gateway> {
  const gateway = await startGateway(gatewayConfig({ ...stack.env, ...overrides }));
  otherGateways.push(gateway);
  return gateway;
}

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'rate-limits', env: deviceLimits });
});
afterAll(async () => {
  await Promise.allSettled(otherGateways.map((gateway) => gateway.stop()));
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

function expectDeviceRefusal(response: { status: number; body: any; headers: Headers }): void {
  expect(response.status).toBe(429);
  expect(response.body).toEqual({ code: 'E-R1/1-01', message: expect.any(String), detail: expect.any(String) });
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(DEVICE_WINDOW_SECONDS);
  expect(response.headers.get('ratelimit-policy')).toBe(`"device";q=${DEVICE_BURST};w=${DEVICE_WINDOW_SECONDS}`);
  expect(response.headers.get('ratelimit')).toBe(`"device";r=0;t=${retryAfter}`);
}

test('a device over its limit on the single route is answered 429 E-R1/1-01 with Retry-After and RateLimit headers, and nothing of it is stored or published', async () => {
  const auth = await bearerFor();
  const imei = uniqueImei();
  const allowed = DEVICE_BURST;
  for (let sent = 0; sent < allowed; sent += 1) {
    expect((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), auth)).status).toBe(200);
  }
  const published = await commandsPublishedSettled(stack);

  const refused = await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), auth);
  expectDeviceRefusal(refused);
  // Another device with the same token is not affected.
  expect((await postJson(`${stack.url}${TRIP}`, buildTrip(), auth)).status).toBe(200);

  expect(await commandsPublishedSettled(stack)).toBe(published + 1 + 1);
  expect(await storedFor([imei])).toBe(allowed);
});

test('a device over its limit through the OsmAnd protocol is answered 429 E-R1/1-01 too, counted with its JSON posts, and the refused position is not stored', async () => {
  const auth = await bearerFor();
  const imei = uniqueDeviceImei();
  const registration = await postJson(`${stack.url}${DEVICES_PATH}`, { imei }, auth);
  expect(registration.status).toBe(200);
  // One clock reading for all: read anew per request, two requests a second apart could name the same
  // time, and the second would be a resend of the first.
  const now = Math.floor(Date.now() / 1000);
  const osmand = (secondsAgo: number) =>
    fetch(`${stack.url}/osmand/${registration.body.data.key}?id=${imei}&lat=1&lon=2&timestamp=${now - secondsAgo}`);

  // Part of its burst through the JSON API, the rest through OsmAnd: one counter per device.
  expect((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), auth)).status).toBe(200);
  for (let sent = 1; sent < DEVICE_BURST; sent += 1) expect((await osmand(100 + sent)).status).toBe(200);

  const refused = await osmand(10);
  expectDeviceRefusal({ status: refused.status, body: await refused.json(), headers: refused.headers });
  expect(await storedFor([imei])).toBe(DEVICE_BURST);
});

test('posts sent at once are each counted as if alone: one device gets exactly its burst, the devices beside it are all stored', async () => {
  const auth = await bearerFor();
  const busy = uniqueImei();
  const others = Array.from({ length: 12 }, () => uniqueImei());
  // Interleaved, so that the writes arriving together mix the busy device with the others.
  const order = others.flatMap((imei) => [buildTrip({ imei: busy }), buildTrip({ imei })]);
  const answers = await Promise.all(order.map((trip) => postJson(`${stack.url}${TRIP}`, trip, auth)));

  const busyAnswers = answers.filter((_, index) => order[index]!.imei === busy);
  expect(busyAnswers.filter((answer) => answer.status === 200)).toHaveLength(DEVICE_BURST);
  for (const refused of busyAnswers.filter((answer) => answer.status !== 200)) expectDeviceRefusal(refused);
  expect(answers.filter((_, index) => order[index]!.imei !== busy).map((answer) => answer.status)).toEqual(others.map(() => 200));
  expect(await storedFor([busy])).toBe(DEVICE_BURST);
  expect(await storedFor(others)).toBe(others.length);
});

test('the batch route counts each position against its device: a batch taking one of its devices over the limit is refused whole, storing nothing', async () => {
  const auth = await bearerFor();
  const [within, over] = [uniqueImei(), uniqueImei()];
  const published = await commandsPublishedSettled(stack);

  const mixed = [
    buildTrip({ imei: within }),
    buildTrip({ imei: over }),
    buildTrip({ imei: within }),
    ...Array.from({ length: DEVICE_BURST }, () => buildTrip({ imei: over })),
  ];
  expectDeviceRefusal(await postJson(`${stack.url}${BATCH}`, mixed, auth));
  expect(await commandsPublishedSettled(stack)).toBe(published + 1);
  expect(await storedFor([within, over])).toBe(0);

  // Within the limit a batch is stored, and its positions count: 3, then 2 more make the burst of 5.
  const device = uniqueImei();
  const first = await postJson(
    `${stack.url}${BATCH}`,
    [buildTrip({ imei: device }), buildTrip({ imei: device }), buildTrip({ imei: device })],
    auth,
  );
  expect(first.status).toBe(200);
  expect(first.body.data).toMatchObject({ accepted: 3, rejected: 0 });
  const burst = await postJson(`${stack.url}${BATCH}`, [buildTrip({ imei: device }), buildTrip({ imei: device })], auth);
  expect(burst.status).toBe(200);
  expectDeviceRefusal(await postJson(`${stack.url}${BATCH}`, [buildTrip({ imei: device })], auth));
  // An invalid position counts for nothing: it is answered in its item, as it would be alone.
  const invalidOnly = await postJson(`${stack.url}${BATCH}`, [buildTrip({ imei: device, latitude: 91 })], auth);
  expect(invalidOnly.status).toBe(200);
  expect(invalidOnly.body.data).toMatchObject({ accepted: 0, rejected: 1 });
  expect(await storedFor([device])).toBe(DEVICE_BURST);
});

test('a token subject over its requests per second is answered 429 E-R1/1-02 on every write route, and what it refused is not stored', async () => {
  const limited = await anotherGateway({
    RATE_LIMIT_SUBJECT_PER_SECOND: String(SUBJECT_PER_SECOND),
    RATE_LIMIT_SUBJECT_BURST: String(SUBJECT_BURST),
  });
  const auth = await bearerFor();
  const trips = Array.from({ length: 12 }, () => buildTrip());
  const [tripAnswers, groupAnswers] = await Promise.all([
    Promise.all(trips.map((trip) => postJson(`${limited.url}${TRIP}`, trip, auth))),
    Promise.all(Array.from({ length: 6 }, () => postJson(`${limited.url}${GROUP}`, buildGroup(), auth))),
  ]);
  const answers = [...tripAnswers, ...groupAnswers];
  expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
  // Sent at once, they span one or two windows, each letting the burst through.
  const accepted = answers.filter((answer) => answer.status === 200).length;
  expect(accepted).toBeGreaterThanOrEqual(1);
  expect(accepted).toBeLessThanOrEqual(2 * SUBJECT_BURST);

  const refusal = answers.find((answer) => answer.status === 429)!;
  expect(refusal.body).toEqual({ code: 'E-R1/1-02', message: expect.any(String), detail: expect.any(String) });
  const retryAfter = Number(refusal.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(SUBJECT_BURST / SUBJECT_PER_SECOND);
  expect(refusal.headers.get('ratelimit-policy')).toBe(`"subject";q=${SUBJECT_BURST};w=${SUBJECT_BURST / SUBJECT_PER_SECOND}`);
  expect(refusal.headers.get('ratelimit')).toBe(`"subject";r=0;t=${retryAfter}`);

  const acceptedTrips = tripAnswers.filter((answer) => answer.status === 200).length;
  expect(await storedFor(trips.map((trip) => trip.imei as string))).toBe(acceptedTrips);
  // Another subject is not affected.
  expect((await postJson(`${limited.url}${TRIP}`, buildTrip(), await bearerFor())).status).toBe(200);
});

test("the fleet apps' other writes count against their subject too: past it a geofence create or delete is 429 E-R1/1-02 and changes nothing", async () => {
  const limited = await anotherGateway({
    RATE_LIMIT_SUBJECT_PER_SECOND: String(SUBJECT_PER_SECOND),
    RATE_LIMIT_SUBJECT_BURST: String(SUBJECT_BURST),
  });
  const tag = randomUUID();
  const names = Array.from({ length: 6 }, (_, i) => `limited-${tag}-${i}`);
  const stored = async () =>
    (await db().query<{ name: string }>('SELECT name FROM geofences WHERE name LIKE $1', [`limited-${tag}-%`])).rows.map((row) => row.name);

  const creator = await bearerFor();
  const creates = await Promise.all(names.map((name) => postJson(`${limited.url}${GEOFENCES_PATH}`, squareGeofence(name), creator)));
  expect(creates.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
  const refused = creates.find((answer) => answer.status === 429)!;
  expect(refused.body).toEqual({ code: 'E-R1/1-02', message: expect.any(String), detail: expect.any(String) });
  expect(refused.headers.get('ratelimit-policy')).toBe(`"subject";q=${SUBJECT_BURST};w=${SUBJECT_BURST / SUBJECT_PER_SECOND}`);
  const created = creates.filter((answer) => answer.status === 200).map((answer) => answer.body.data.name as string);
  expect(created.length).toBeGreaterThanOrEqual(1);
  expect(created.length).toBeLessThanOrEqual(2 * SUBJECT_BURST);
  expect((await stored()).sort()).toEqual([...created].sort());

  // Six geofences, created where no subject limit applies, deleted at once by another subject: those its
  // limit refuses are still stored.
  const extra = await Promise.all(
    Array.from({ length: 6 }, (_, i) => postJson(`${stack.url}${GEOFENCES_PATH}`, squareGeofence(`limited-${tag}-extra-${i}`), creator)),
  );
  const remover = await bearerFor();
  const deletes = await Promise.all(
    extra.map(async (answer) => {
      const response = await fetch(`${limited.url}${GEOFENCES_PATH}/${answer.body.data.id}`, { method: 'DELETE', headers: remover });
      return { status: response.status, body: (await response.json()) as { code: string } };
    }),
  );
  expect(deletes.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
  const refusedDeletes = deletes.filter((answer) => answer.status === 429);
  expect(refusedDeletes.length).toBeGreaterThanOrEqual(6 - 2 * SUBJECT_BURST);
  expect(refusedDeletes[0]!.body.code).toBe('E-R1/1-02');
  const storedExtra = (await stored()).filter((name) => name.includes('-extra-'));
  expect(storedExtra.length).toBe(refusedDeletes.length);
});

test("a post its subject's limit refuses is not counted against its device, and an invalid body counts against neither", async () => {
  const limited = await anotherGateway({
    RATE_LIMIT_SUBJECT_PER_SECOND: String(SUBJECT_PER_SECOND),
    RATE_LIMIT_SUBJECT_BURST: String(SUBJECT_BURST),
  });
  const imei = uniqueImei();
  const noisy = await bearerFor();
  // Sent at once: the subject's burst passes (a window ending meanwhile lets another through), the rest are refused by the subject.
  const answers = await Promise.all(Array.from({ length: 8 }, () => postJson(`${limited.url}${TRIP}`, buildTrip({ imei }), noisy)));
  const accepted = answers.filter((answer) => answer.status === 200).length;
  expect(answers.filter((answer) => answer.status !== 200).map((answer) => [answer.status, answer.body.code])).toEqual(
    Array(8 - accepted).fill([429, 'E-R1/1-02']),
  );
  expect(accepted).toBeLessThanOrEqual(2 * SUBJECT_BURST);

  // Invalid bodies are answered 400 before any count.
  const other = await bearerFor();
  for (let sent = 0; sent < 2 * SUBJECT_BURST; sent += 1) {
    expect((await postJson(`${limited.url}${TRIP}`, buildTrip({ imei, latitude: 91 }), other)).status).toBe(400);
  }
  // Were they counted, the subject would be over its burst of 2 until its window ends.
  expect((await postJson(`${limited.url}${TRIP}`, buildTrip({ imei }), other)).status).toBe(200);
  // The device has the rest of its burst, as only the accepted posts counted against it.
  for (let sent = accepted + 1; sent < DEVICE_BURST; sent += 1) {
    expect((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), await bearerFor())).status).toBe(200);
  }
  expectDeviceRefusal(await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), await bearerFor()));
  expect(await storedFor([imei])).toBe(DEVICE_BURST);
});

test('two gateways sharing Redis share the limits: a device refused by one is refused by the other', async () => {
  const second = await anotherGateway();
  const auth = await bearerFor();
  const imei = uniqueImei();
  const gateways = [stack.url, second.url];
  for (let sent = 0; sent < DEVICE_BURST; sent += 1) {
    expect((await postJson(`${gateways[sent % 2]}${TRIP}`, buildTrip({ imei }), auth)).status).toBe(200);
  }
  expectDeviceRefusal(await postJson(`${second.url}${TRIP}`, buildTrip({ imei }), auth));
  expectDeviceRefusal(await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), auth));
  expect(await storedFor([imei])).toBe(DEVICE_BURST);
});

test('0 turns a limit off: a gateway with both limits at 0 stores every post of one device and one subject', async () => {
  const unlimited = await anotherGateway({ RATE_LIMIT_DEVICE_PER_MINUTE: '0', RATE_LIMIT_SUBJECT_PER_SECOND: '0' });
  const auth = await bearerFor();
  const imei = uniqueImei();
  const count = 4 * DEVICE_BURST;
  const answers = await Promise.all(Array.from({ length: count }, () => postJson(`${unlimited.url}${TRIP}`, buildTrip({ imei }), auth)));
  expect(answers.map((answer) => answer.status)).toEqual(Array(count).fill(200));
  const batch = await postJson(
    `${unlimited.url}${BATCH}`,
    Array.from({ length: count }, () => buildTrip({ imei })),
    auth,
  );
  expect(batch.status).toBe(200);
  expect(await storedFor([imei])).toBe(2 * count);
});

// The OsmAnd protocol over real HTTP, in the shapes real clients send it: the OsmAnd app's URL template,
// and Traccar Client's query, form and JSON formats. Each answer is checked against the row it stored,
// read as soon as the answer arrives: a 200 means committed.
import { closeKafka } from '../support/kafka';
import { scrape } from '../support/scrape';
import { closeDb, db, postJson, signToken, uniqueDeviceImei, type Stack } from '../support/harness';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'osmand' });
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

interface Registered {
  imei: string;
  key: string;
  url: string;
}

async function register(): Promise<Registered> {
  const imei = uniqueDeviceImei();
  const res = await postJson(`${stack.url}${DEVICES_PATH}`, { imei }, auth);
  if (res.status !== 200) throw new Error(`registering ${imei} answered ${res.status}`);
  return { imei, key: res.body.data.key, url: `${stack.url}/osmand/${res.body.data.key}` };
}

async function rowsOf(imei: string) {
  return (await db().query('SELECT * FROM trip_locations WHERE imei = $1 ORDER BY gps_time', [imei])).rows;
}

async function answer(response: Response) {
  const text = await response.text();
  return {
    status: response.status,
    text,
    body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
  };
}

const get = async (url: string, query: string) => answer(await fetch(`${url}?${query}`));
const post = async (url: string, body: string, type: string) =>
  answer(await fetch(url, { method: 'POST', headers: { 'content-type': type }, body }));

const recently = (secondsAgo: number) => Math.floor(Date.now() / 1000) - secondsAgo;

describe('accepted: each client’s format is stored as sent, and answered 200 with an empty body once committed', () => {
  test('the OsmAnd app’s URL template: time in milliseconds, speed in knots stored in km/h, the rest as attributes', async () => {
    const device = await register();
    const time = (recently(60) * 1000 + 250).toString();
    const res = await get(
      device.url,
      `id=${device.imei}&lat=52.520008&lon=13.404954&timestamp=${time}&hdop=1.2&altitude=34.5&speed=10&bearing=271.5`,
    );

    expect(res).toMatchObject({ status: 200, text: '' });
    const [row] = await rowsOf(device.imei);
    expect(row).toMatchObject({ latitude: 52.520008, longitude: 13.404954, angle: 271.5, ignition: null, satellite: null });
    expect(row.speed).toBeCloseTo(18.52, 6);
    expect(row.gps_time.getTime()).toBe(Number(time));
    expect(row.attributes).toEqual({ hdop: 1.2, altitude: 34.5 });
  });

  test('Traccar Client’s query format: POST with the parameters in the URL, time in seconds, booleans as booleans', async () => {
    const device = await register();
    const time = recently(120);
    const res = answer(
      await fetch(
        `${device.url}?id=${device.imei}&timestamp=${time}&lat=-6.2&lon=106.8&speed=0&bearing=0&altitude=12&accuracy=5&batt=87&charge=true&ignition=false`,
        {
          method: 'POST',
        },
      ),
    );

    expect(await res).toMatchObject({ status: 200, text: '' });
    const [row] = await rowsOf(device.imei);
    expect(row).toMatchObject({ latitude: -6.2, longitude: 106.8, speed: 0, angle: 0, ignition: false });
    expect(row.gps_time.getTime()).toBe(time * 1000);
    expect(row.attributes).toEqual({ altitude: 12, accuracy: 5, batt: 87, charge: true });
  });

  test('Traccar Client’s form format, with location=lat,lon and deviceid, and the position’s time of receipt when it sends none', async () => {
    const device = await register();
    const before = Date.now();
    const res = await post(
      device.url,
      `deviceid=${device.imei}&location=48.8584%2C2.2945&heading=90&valid=true&cell=262%2C2%2C1234%2C5678`,
      'application/x-www-form-urlencoded',
    );

    expect(res).toMatchObject({ status: 200, text: '' });
    const [row] = await rowsOf(device.imei);
    expect(row).toMatchObject({ latitude: 48.8584, longitude: 2.2945, angle: 90, speed: null, ignition: null });
    expect(row.gps_time.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(row.gps_time.getTime()).toBeLessThanOrEqual(Date.now());
    expect(row.attributes).toEqual({ valid: true, cell: '262,2,1234,5678' });
  });

  test('Traccar Client’s JSON: speed in m/s stored in km/h, battery as a percentage, negative heading unknown', async () => {
    const device = await register();
    const timestamp = new Date(recently(30) * 1000).toISOString();
    const body = {
      location: {
        timestamp,
        coords: { latitude: 40.7128, longitude: -74.006, speed: 5, heading: -1, altitude: 10.5, accuracy: 3.9 },
        is_moving: true,
        odometer: 1520.4,
        event: 'motionchange',
        battery: { level: 0.76, is_charging: false },
        activity: { type: 'in_vehicle' },
        extras: { driver: 'A7' },
      },
      device_id: device.imei,
    };
    const res = await post(device.url, JSON.stringify(body), 'application/json');

    expect(res).toMatchObject({ status: 200, text: '' });
    const [row] = await rowsOf(device.imei);
    expect(row).toMatchObject({ latitude: 40.7128, longitude: -74.006, angle: null, ignition: null });
    expect(row.speed).toBeCloseTo(18, 6);
    expect(row.gps_time.toISOString()).toBe(timestamp);
    expect(row.attributes).toEqual({
      altitude: 10.5,
      accuracy: 3.9,
      is_moving: true,
      odometer: 1520.4,
      event: 'motionchange',
      batteryLevel: 76,
      charge: false,
      activity: 'in_vehicle',
      driver: 'A7',
    });
  });

  test('a JSON array of locations is stored as a batch, each once', async () => {
    const device = await register();
    const location = (secondsAgo: number) => ({
      location: {
        timestamp: new Date(recently(secondsAgo) * 1000).toISOString(),
        coords: { latitude: 1, longitude: 2, speed: -1, heading: 45 },
      },
      device_id: device.imei,
    });
    const res = await post(device.url, JSON.stringify([location(30), location(20), location(10)]), 'application/json');

    expect(res).toMatchObject({ status: 200, text: '' });
    const rows = await rowsOf(device.imei);
    expect(rows.map((row) => [row.speed, row.angle])).toEqual([
      [null, 45],
      [null, 45],
      [null, 45],
    ]);
  });

  test.each([
    ['ISO 8601 with an offset', '2026-11-20T10:15:30%2B02:00', '2026-11-20T08:15:30.000Z'],
    ['ISO 8601 with Z', '2026-11-20T08:15:31Z', '2026-11-20T08:15:31.000Z'],
    ['yyyy-MM-dd HH:mm:ss as UTC', '2026-11-20%2008:15:32', '2026-11-20T08:15:32.000Z'],
  ])('a timestamp in %s is read as Traccar reads it', async (_format, timestamp, stored) => {
    const device = await register();
    expect(await get(device.url, `id=${device.imei}&lat=1&lon=2&timestamp=${timestamp}`)).toMatchObject({ status: 200 });
    expect((await rowsOf(device.imei))[0].gps_time.toISOString()).toBe(stored);
  });

  test('the same fix sent again is answered 200 and stored once; its last location is read back with its attributes', async () => {
    const device = await register();
    const query = `id=${device.imei}&lat=10&lon=20&timestamp=${recently(5)}&speed=1&batt=50`;
    expect(await get(device.url, query)).toMatchObject({ status: 200 });
    expect(await get(device.url, query)).toMatchObject({ status: 200 });

    expect(await rowsOf(device.imei)).toHaveLength(1);
    const last = await fetch(`${stack.url}${DEVICES_PATH}/${device.imei}/last-location`, { headers: auth });
    expect(((await last.json()) as { data: unknown }).data).toMatchObject({
      imei: device.imei,
      latitude: 10,
      longitude: 20,
      ignition: null,
      attributes: { batt: 50 },
    });
  });
});

describe('acknowledged and not stored: a report without coordinates', () => {
  test.each([
    ['cell towers', 'cell=250,99,1234,5678'],
    ['Wi-Fi networks', 'wifi=aa:bb:cc:dd:ee:ff,-60'],
  ])('located by %s alone answers 200, stores nothing, and is counted as dropped', async (_label, located) => {
    const device = await register();
    const metrics = `${stack.url}/metrics`;
    const dropped = (await scrape(metrics)).value('fleet_tracker_positions_dropped_total', { reason: 'noCoordinates' });

    const res = await get(device.url, `id=${device.imei}&timestamp=${recently(5)}&${located}`);

    expect(res).toMatchObject({ status: 200, text: '' });
    expect(await rowsOf(device.imei)).toHaveLength(0);
    expect((await scrape(metrics)).value('fleet_tracker_positions_dropped_total', { reason: 'noCoordinates' })).toBe(dropped + 1);
  });
});

describe('refused: a JSON error, and nothing stored', () => {
  test('an unknown key answers 401', async () => {
    const imei = uniqueDeviceImei();
    const res = await get(`${stack.url}/osmand/${'A'.repeat(43)}`, `id=${imei}&lat=1&lon=2`);

    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'E-G1/1-04', message: 'The device key is not registered' });
    expect(await rowsOf(imei)).toHaveLength(0);
  });

  test('another device’s id under a key answers 403', async () => {
    const [device, other] = [await register(), await register()];
    const res = await get(device.url, `id=${other.imei}&lat=1&lon=2`);

    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'E-G1/1-05' });
    expect(await rowsOf(other.imei)).toHaveLength(0);
    expect(await rowsOf(device.imei)).toHaveLength(0);
  });

  test.each([
    ['a missing id', 'id', 'lat=1&lon=2'],
    ['a missing lat', 'lat', 'id={imei}&lon=2'],
    ['an unreadable lon', 'lon', 'id={imei}&lat=1&lon=east'],
    ['a latitude out of range', 'lat', 'id={imei}&lat=91&lon=2'],
    ['a timestamp that is no time', 'timestamp', 'id={imei}&lat=1&lon=2&timestamp=yesterday'],
    ['a timestamp of more digits than any date holds', 'timestamp', 'id={imei}&lat=1&lon=2&timestamp=99999999999999999999'],
    ['a timestamp further ahead than MAX_FUTURE_SKEW', 'timestamp', `id={imei}&lat=1&lon=2&timestamp=${recently(-3 * 86_400)}`],
    ['a negative speed', 'speed', 'id={imei}&lat=1&lon=2&speed=-3'],
    ['a hexadecimal latitude', 'lat', 'id={imei}&lat=0x10&lon=2'],
    ['a latitude of 1e400', 'lat', 'id={imei}&lat=1e400&lon=2'],
    ['a hexadecimal bearing', 'bearing', 'id={imei}&lat=1&lon=2&bearing=0x10'],
  ])('%s answers 400 naming %s', async (_case, field, query) => {
    const device = await register();
    const res = await get(device.url, query.replace('{imei}', device.imei));

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: expect.stringMatching(new RegExp(`^${field}: `)) });
    expect(await rowsOf(device.imei)).toHaveLength(0);
  });

  test('a JSON extras value of 1e400 answers 400 naming location.extras rather than storing null', async () => {
    const device = await register();
    const body = `{"device_id":"${device.imei}","location":{"coords":{"latitude":1,"longitude":2},"extras":{"big":1e400}}}`;
    const res = await post(device.url, body, 'application/json');

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: 'location.extras: Must hold only finite numbers' });
    expect(await rowsOf(device.imei)).toHaveLength(0);
  });

  test('a JSON location without device_id answers 400 naming it', async () => {
    const device = await register();
    const res = await post(device.url, JSON.stringify({ location: { coords: { latitude: 1, longitude: 2 } } }), 'application/json');

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: expect.stringMatching(/^device_id: /) });
  });
});

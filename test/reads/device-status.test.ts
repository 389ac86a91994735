// A device's status over real HTTP: registered or seen devices, online or offline by the time anything
// of theirs was last received (whatever the fixes' times), and the list of devices by status.
import { testClient, type ApiClient } from '../support/api-client';
import { closeKafka } from '../support/kafka';
import { buildTrip, closeDb, db, postJson, uniqueDeviceImei, type Stack } from '../support/harness';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { PAGE_MAX_BYTES } from '../../services/gateway/src/page-bytes';
import { readEveryPage } from '../support/pages';

let stack: Stack;
let auth: { authorization: string };
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'device-status', env: { DEVICE_OFFLINE_AFTER: '10m' } });
  api = await testClient(stack);
  auth = { authorization: api.authorization! };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function get(path: string, headers: Record<string, string> = auth) {
  const response = await fetch(`${stack.url}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as any };
}

const post = (imei: string, gpsTime = new Date(Date.now() - 60_000).toISOString()) => api.postTrip(buildTrip({ imei, gpsTime }));

/** A device last heard from 11 minutes ago: its last receipt moved into the past. */
async function silenced(imei: string) {
  await db().query("UPDATE device_last_locations SET last_seen_at = now() - interval '11 minutes' WHERE imei = $1", [imei]);
}

describe('GET /fleet/api/v1/devices/{imei}', () => {
  test('a device that just posted is online, with its last position as last-location answers it', async () => {
    const imei = uniqueDeviceImei();
    await postJson(`${stack.url}${DEVICES_PATH}`, { imei, name: 'Van 9' }, auth);
    const id = await post(imei);

    const res = await get(`${DEVICES_PATH}/${imei}`);
    const last = await get(`${DEVICES_PATH}/${imei}/last-location`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: { imei, name: 'Van 9', lastSeenAt: last.body.data.receivedAt, lastPosition: last.body.data, status: 'online' },
    });
    expect(res.body.data.lastPosition.id).toBe(id);
  });

  test('nothing received for DEVICE_OFFLINE_AFTER: offline; a registered device never heard from: offline with no position', async () => {
    const seen = uniqueDeviceImei();
    await post(seen);
    await silenced(seen);
    expect((await get(`${DEVICES_PATH}/${seen}`)).body.data).toMatchObject({ status: 'offline', lastPosition: { imei: seen } });
    expect((await get(`${DEVICES_PATH}/${seen}`)).body.data).not.toHaveProperty('name');

    const quiet = uniqueDeviceImei();
    await postJson(`${stack.url}${DEVICES_PATH}`, { imei: quiet }, auth);
    expect((await get(`${DEVICES_PATH}/${quiet}`)).body.data).toEqual({
      imei: quiet,
      name: null,
      lastSeenAt: null,
      lastPosition: null,
      status: 'offline',
    });
  });

  test('a device never seen and not registered answers 404; no token 401', async () => {
    expect(await get(`${DEVICES_PATH}/${uniqueDeviceImei()}`)).toMatchObject({ status: 404, body: { code: 'E-N1/1-05' } });
    expect(await get(`${DEVICES_PATH}/${uniqueDeviceImei()}`, {})).toMatchObject({ status: 401 });
  });
});

describe("online and offline follow receipt, not the fixes' times", () => {
  test('a device whose newest fix is dated ahead stays online while it posts current fixes, and its lastSeenAt moves on', async () => {
    const imei = uniqueDeviceImei();
    await post(imei, new Date(Date.now() + 2 * 3_600_000).toISOString());
    await silenced(imei);
    await post(imei, new Date(Date.now() - 1000).toISOString());

    const { data } = (await get(`${DEVICES_PATH}/${imei}`)).body;
    expect(data.status).toBe('online');
    expect(Date.now() - Date.parse(data.lastSeenAt)).toBeLessThan(60_000);
  });

  test('a device uploading buffered fixes 30 minutes old, older than its newest, is online and keeps its newest as last position', async () => {
    const imei = uniqueDeviceImei();
    const newest = new Date(Date.now() - 60_000).toISOString();
    await post(imei, newest);
    await silenced(imei);
    await post(imei, new Date(Date.now() - 30 * 60_000).toISOString());

    const { data } = (await get(`${DEVICES_PATH}/${imei}`)).body;
    expect(data).toMatchObject({ status: 'online', lastPosition: { gpsTime: newest } });
  });
});

describe('GET /fleet/api/v1/devices?status=', () => {
  async function everyPage(query: string): Promise<Array<{ imei: string; status: string }>> {
    const all = [];
    let cursor: string | null = null;
    do {
      const res = await get(`${DEVICES_PATH}?${[query, 'limit=50', cursor && `cursor=${cursor}`].filter(Boolean).join('&')}`);
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor !== null);
    return all;
  }

  test('lists each device once, keyset-paged by IMEI, offline ones under status=offline and online ones under status=online', async () => {
    const [online, offline, registeredOnly] = [uniqueDeviceImei(), uniqueDeviceImei(), uniqueDeviceImei()];
    await post(online);
    await post(offline);
    await silenced(offline);
    await postJson(`${stack.url}${DEVICES_PATH}`, { imei: registeredOnly }, auth);

    const offlineList = await everyPage('status=offline');
    const onlineList = await everyPage('status=online');
    const all = await everyPage('');

    expect(offlineList.every((device) => device.status === 'offline')).toBe(true);
    expect(onlineList.every((device) => device.status === 'online')).toBe(true);
    expect(offlineList.map((device) => device.imei)).toEqual(expect.arrayContaining([offline, registeredOnly]));
    expect(onlineList.map((device) => device.imei)).toContain(online);
    expect(onlineList.map((device) => device.imei)).not.toContain(offline);
    expect(onlineList.map((device) => device.imei)).not.toContain(registeredOnly);
    expect(offlineList.map((device) => device.imei)).not.toContain(online);
    const imeis = all.map((device) => device.imei);
    expect(imeis).toEqual([...imeis].sort());
    expect(new Set(imeis).size).toBe(imeis.length);
    // Other test files register devices in the same database meanwhile, so the three listings are not of
    // one moment: the unfiltered one is held to this test's own devices, each listed once with its status.
    for (const [imei, status] of [
      [online, 'online'],
      [offline, 'offline'],
      [registeredOnly, 'offline'],
    ] as const) {
      expect(all.filter((device) => device.imei === imei)).toEqual([expect.objectContaining({ imei, status })]);
    }
  });

  test('devices whose last positions carry 15 KB of attributes come in pages of about PAGE_MAX_BYTES, however high the limit, each once', async () => {
    const imeis = Array.from({ length: 100 }, () => uniqueDeviceImei());
    for (const imei of imeis)
      await api.postTrip(
        buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString(), attributes: { note: 'x'.repeat(15_000) } }),
      );

    const { items, pageBytes } = await readEveryPage<{ imei: string }>(`${stack.url}${DEVICES_PATH}?limit=1000`, auth);
    const seen = items.map((device) => device.imei);

    expect(seen).toEqual(expect.arrayContaining(imeis));
    expect(new Set(seen).size).toBe(seen.length);
    expect(pageBytes.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...pageBytes)).toBeLessThanOrEqual(PAGE_MAX_BYTES);
  });

  test('a bad status, limit or cursor answers 400 naming it', async () => {
    expect(await get(`${DEVICES_PATH}?status=asleep`)).toMatchObject({
      status: 400,
      body: { detail: expect.stringMatching(/^status: /) },
    });
    expect(await get(`${DEVICES_PATH}?limit=5000`)).toMatchObject({
      status: 400,
      body: { detail: expect.stringMatching(/^limit: /) },
    });
    expect(await get(`${DEVICES_PATH}?cursor=!!`)).toMatchObject({
      status: 400,
      body: { detail: expect.stringMatching(/^cursor: /) },
    });
  });
});

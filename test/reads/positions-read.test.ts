// The position reads on a running stack: the last location kept by the trip-writer as positions arrive
// (late ones included), history pages that cover a range exactly once, and every refusal.
import { buildTrip, closeDb, db, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { testClient, type ApiClient } from '../support/api-client';
import { closeKafka } from '../support/kafka';
import { positionStore } from '../../services/gateway/src/positions/position-store';
import { createPositionReader } from '../../services/gateway/src/positions/read-positions';
import { createPartition, dayOf } from '../../services/trip-writer/src/trip-partitions';
import { DEVICES_PATH, TRIP_LOCATION_BATCH_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { PAGE_MAX_BYTES } from '../../services/gateway/src/page-bytes';
import { readEveryPage } from '../support/pages';

let stack: Stack;
let auth: { authorization: string };
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'positions-read' });
  api = await testClient(stack);
  auth = { authorization: api.authorization! };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const DAY_MS = 24 * 60 * 60 * 1000;
const BASE = Date.UTC(2026, 10, 22, 0, 0, 0);

async function getJson(path: string, headers: Record<string, string> = auth) {
  const response = await fetch(`${stack.url}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

function lastLocation(imei: string, headers?: Record<string, string>) {
  return getJson(`${DEVICES_PATH}/${encodeURIComponent(imei)}/last-location`, headers);
}

function history(imei: string, params: Record<string, string> = {}, headers?: Record<string, string>) {
  const query = new URLSearchParams(params).toString();
  return getJson(`${DEVICES_PATH}/${encodeURIComponent(imei)}/trip-locations${query ? `?${query}` : ''}`, headers);
}

/**
 * Positions stored straight in the table, one per gps time; returns their ids in time order. The
 * days' partitions are made first, as the trip-writer makes them for the positions it stores.
 */
async function insertPositions(imei: string, gpsTimes: readonly string[], attributes: object | null = null): Promise<number[]> {
  for (const day of new Set(gpsTimes.map((time) => dayOf(time)!))) await createPartition(db(), day);
  const result = await db().query<{ id: string }>(
    `INSERT INTO trip_locations (imei, gps_time, latitude, longitude, speed, ignition, attributes)
     SELECT $1, t, -6.2, 106.8, 10, true, $3::jsonb FROM unnest($2::timestamptz[]) AS t
     ORDER BY t
     RETURNING id`,
    [imei, gpsTimes, attributes === null ? null : JSON.stringify(attributes)],
  );
  return result.rows.map((row) => Number(row.id));
}

function minutesAfter(start: number, count: number): string[] {
  return Array.from({ length: count }, (_, index) => new Date(start + index * 60_000).toISOString());
}

describe('last location', () => {
  test('after a newer and then an older position of one device, answers the newer with every field', async () => {
    const imei = uniqueImei();
    const newer = buildTrip({ imei, gpsTime: '2026-11-22T08:30:00.250Z', latitude: -6.1, temp: -18.5 });
    const older = buildTrip({ imei, gpsTime: '2026-11-22T08:29:00Z', latitude: -6.9 });
    const newerId = await api.postTrip(newer);
    await api.postTrip(older);

    const res = await lastLocation(imei);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        id: newerId,
        imei,
        gpsTime: '2026-11-22T08:30:00.250Z',
        latitude: -6.1,
        longitude: newer.longitude,
        speed: newer.speed,
        ignition: true,
        angle: 180,
        satellite: 9,
        door1: false,
        door2: true,
        temp: -18.5,
        fuel_percentage: 63.2,
        attributes: null,
        receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
  });

  test('is moved forward by the write that stores a newer position, before that write is answered', async () => {
    const imei = uniqueImei();
    await api.postTrip(buildTrip({ imei, gpsTime: '2026-11-22T08:00:00Z' }));
    const id = await api.postTrip(buildTrip({ imei, gpsTime: '2026-11-22T09:00:00Z', angle: undefined, door1: undefined }));

    const res = await lastLocation(imei);
    expect(res.body.data).toMatchObject({ id, gpsTime: '2026-11-22T09:00:00.000Z', angle: null, door1: null });
    const stored = await db().query('SELECT trip_location_id, gps_time FROM device_last_locations WHERE imei = $1', [imei]);
    expect(stored.rows).toEqual([{ trip_location_id: String(id), gps_time: new Date('2026-11-22T09:00:00Z') }]);
  });

  test('a batch holding several positions of one device, out of order, leaves the newest', async () => {
    const imei = uniqueImei();
    const times = ['2026-11-22T10:00:02Z', '2026-11-22T10:00:05Z', '2026-11-22T10:00:01Z'];
    const res = await postJson(
      `${stack.url}${TRIP_LOCATION_BATCH_PATH}`,
      times.map((gpsTime) => buildTrip({ imei, gpsTime })),
      auth,
    );
    expect(res.status).toBe(200);
    expect(res.body.data.accepted).toBe(3);

    const last = await lastLocation(imei);
    expect(last.body.data).toMatchObject({ id: res.body.data.items[1].id, gpsTime: '2026-11-22T10:00:05.000Z' });
  });

  test('a retried position (already stored) leaves a newer last location as it is', async () => {
    const imei = uniqueImei();
    const first = buildTrip({ imei, gpsTime: '2026-11-22T11:00:00Z' });
    await api.postTrip(first);
    const newestId = await api.postTrip(buildTrip({ imei, gpsTime: '2026-11-22T11:05:00Z' }));
    await api.postTrip(first);

    expect((await lastLocation(imei)).body.data).toMatchObject({ id: newestId, gpsTime: '2026-11-22T11:05:00.000Z' });
  });

  test('asked for in one turn, several devices each get their own last location and one without any its 404', async () => {
    const [first, second] = [uniqueImei(), uniqueImei()];
    const firstId = await api.postTrip(buildTrip({ imei: first, gpsTime: '2026-11-22T12:00:00.123Z' }));
    const secondId = await api.postTrip(buildTrip({ imei: second, gpsTime: '2026-11-22T12:30:00Z' }));
    const reader = createPositionReader({ positions: positionStore(db()) });

    // Asked in one turn of the event loop: the reader serves them with one lookup.
    const answers = await Promise.allSettled([first, uniqueImei(), second, first].map((imei) => reader.lastLocation(imei)));
    expect(answers.map((answer) => (answer.status === 'fulfilled' ? answer.value.data : answer.reason.code))).toEqual([
      expect.objectContaining({ id: firstId, imei: first, gpsTime: '2026-11-22T12:00:00.123Z' }),
      'E-N1/1-04',
      expect.objectContaining({ id: secondId, imei: second, gpsTime: '2026-11-22T12:30:00.000Z' }),
      expect.objectContaining({ id: firstId, imei: first }),
    ]);
  });

  test('when the device has no position, responds 404 E-N1/1-04', async () => {
    const res = await lastLocation(uniqueImei());
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: 'E-N1/1-04',
      message: 'The device has no recorded position',
      detail: expect.stringContaining('no position'),
    });
  });
});

describe('trip locations', () => {
  test('250 positions in pages of 100: three pages, every position once and in order, nextCursor null at the end', async () => {
    const imei = uniqueImei();
    const ids = await insertPositions(imei, minutesAfter(BASE, 250));
    const range = { from: new Date(BASE).toISOString(), to: new Date(BASE + DAY_MS).toISOString() };

    const seen: number[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await history(imei, { ...range, limit: '100', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((position: { id: number }) => position.id));
      pageSizes.push(res.body.data.length);
      cursor = res.body.nextCursor;
    } while (cursor !== null);

    expect(pageSizes).toEqual([100, 100, 50]);
    expect(seen).toEqual(ids);
  });

  test('positions with large attributes come in pages of about PAGE_MAX_BYTES, however high the limit, every one once and in order', async () => {
    const imei = uniqueImei();
    // 200 positions of 15 KB of attributes each: 3 MB, where one page of the limit asked would hold them all.
    const ids = await insertPositions(imei, minutesAfter(BASE, 200), { note: 'x'.repeat(15_000) });
    const range = { from: new Date(BASE).toISOString(), to: new Date(BASE + DAY_MS).toISOString() };

    const { items, pageBytes } = await readEveryPage<{ id: number; attributes: unknown }>(
      `${stack.url}${DEVICES_PATH}/${imei}/trip-locations?${new URLSearchParams({ ...range, limit: '1000' })}`,
      auth,
    );

    expect(items.map((position) => position.id)).toEqual(ids);
    expect(items.every((position) => JSON.stringify(position.attributes).length > 15_000)).toBe(true);
    expect(pageBytes.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...pageBytes)).toBeLessThanOrEqual(PAGE_MAX_BYTES);
    expect(Math.min(...pageBytes.slice(0, -1))).toBeGreaterThan(PAGE_MAX_BYTES - 20_000);
  });

  test('a cursor followed without from and to keeps to the range of the first page', async () => {
    const imei = uniqueImei();
    const ids = await insertPositions(imei, minutesAfter(BASE, 5));
    const first = await history(imei, { from: new Date(BASE).toISOString(), to: new Date(BASE + 3 * 60_000).toISOString(), limit: '2' });
    expect(first.body.data.map((p: { id: number }) => p.id)).toEqual(ids.slice(0, 2));

    const second = await history(imei, { cursor: first.body.nextCursor, limit: '2' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })], nextCursor: null });
  });

  test('positions a microsecond apart are each answered once across pages', async () => {
    const imei = uniqueImei();
    const times = ['2026-11-22T08:30:00.000100Z', '2026-11-22T08:30:00.000200Z', '2026-11-22T08:30:00.000900Z', '2026-11-22T08:30:00.001Z'];
    const ids = await insertPositions(imei, times);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await history(imei, {
        from: '2026-11-22T08:30:00Z',
        to: '2026-11-22T08:31:00Z',
        limit: '1',
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...res.body.data.map((p: { id: number }) => p.id));
      cursor = res.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(ids);
  });

  test('from is inclusive and to exclusive, at the millisecond; an offset names the same instant', async () => {
    const imei = uniqueImei();
    const [atFrom, inside, , atTo] = await insertPositions(imei, [
      '2026-11-22T08:00:00Z',
      '2026-11-22T08:30:00Z',
      '2026-11-22T08:59:59.999Z',
      '2026-11-22T09:00:00Z',
    ]);
    const res = await history(imei, { from: '2026-11-22T15:00:00+07:00', to: '2026-11-22T08:59:59.999Z' });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: number }) => p.id)).toEqual([atFrom, inside]);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((p: { id: number }) => p.id)).not.toContain(atTo);
  });

  test('without from and to, answers the last 24 hours up to now', async () => {
    const imei = uniqueImei();
    const now = Date.now();
    const [, recent] = await insertPositions(imei, [
      new Date(now - 25 * 60 * 60 * 1000).toISOString(),
      new Date(now - 60 * 60 * 1000).toISOString(),
    ]);
    const res = await history(imei);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: recent,
          imei,
          gpsTime: expect.any(String),
          latitude: -6.2,
          longitude: 106.8,
          speed: 10,
          ignition: true,
          angle: null,
          satellite: null,
          door1: null,
          door2: null,
          temp: null,
          fuel_percentage: null,
          attributes: null,
          receivedAt: expect.any(String),
        },
      ],
      nextCursor: null,
    });
  });

  test('a device without positions in the range answers an empty page', async () => {
    const res = await history(uniqueImei(), { from: '2026-11-22T00:00:00Z', to: '2026-11-23T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], nextCursor: null });
  });
});

describe('refusals', () => {
  const imei = '356938035643809';
  const from = '2026-11-22T00:00:00Z';
  const to = '2026-11-23T00:00:00Z';

  async function cursorFor(device: string, range: Record<string, string>): Promise<string> {
    await insertPositions(device, minutesAfter(Date.parse(range.from!), 2));
    const res = await history(device, { ...range, limit: '1' });
    expect(res.body.nextCursor).toEqual(expect.any(String));
    return res.body.nextCursor as string;
  }

  test.each([
    ['imei', 'x'.repeat(33), {}],
    ['from', imei, { from: 'yesterday' }],
    ['from', imei, { from: '2026-11-22T08:30:00' }],
    ['from', imei, { from: '1795300000' }],
    ['from', imei, { from: '2026-02-30T00:00:00Z' }],
    ['to', imei, { to: '2026-11-22 08:30:00' }],
    ['to', imei, { to: '' }],
    ['from', imei, { from: to, to: from }],
    ['from', imei, { from, to: from }],
    ['from', imei, { from: '2026-10-22T00:00:00Z', to: '2026-11-22T00:00:00.001Z' }],
    ['from', imei, { from: '2099-01-01T00:00:00Z' }],
    ['limit', imei, { limit: '0' }],
    ['limit', imei, { limit: '1001' }],
    ['limit', imei, { limit: 'abc' }],
    ['limit', imei, { limit: '1.5' }],
    ['limit', imei, { limit: '-1' }],
    ['cursor', imei, { cursor: 'not a cursor' }],
    ['cursor', imei, { cursor: Buffer.from('["356938035643809",0,1,"x"]').toString('base64url') }],
    ['cursor', imei, { cursor: Buffer.from('{}').toString('base64url') }],
  ])('a bad %s (%s %j) responds 400 E-V1/1-06 naming it', async (parameter, device, params) => {
    const res = await history(device, params as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'E-V1/1-06',
      message: 'A request parameter is invalid',
      detail: expect.stringMatching(new RegExp(`^${parameter}: `)),
    });
  });

  test('31 days apart exactly is accepted', async () => {
    const res = await history(imei, { from: '2026-10-22T00:00:00Z', to: '2026-11-22T00:00:00Z' });
    expect(res.status).toBe(200);
  });

  test('a + sent unencoded in an offset is refused with a hint', async () => {
    const res = await getJson(`${DEVICES_PATH}/${imei}/trip-locations?from=2026-11-22T08:30:00+07:00`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^from: .*%2B/);
  });

  test('a repeated parameter responds 400 naming it', async () => {
    const res = await getJson(`${DEVICES_PATH}/${imei}/trip-locations?limit=1&limit=2`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^limit: /);
  });

  test('a bad imei on the last location responds 400, an undecodable one too', async () => {
    for (const path of [`${DEVICES_PATH}/${'x'.repeat(33)}/last-location`, `${DEVICES_PATH}/%zz/last-location`]) {
      const res = await getJson(path);
      expect({ path, status: res.status, code: res.body.code, detail: res.body.detail }).toEqual({
        path,
        status: 400,
        code: 'E-V1/1-06',
        detail: expect.stringMatching(/^imei: /),
      });
    }
  });

  test("a cursor is refused for another device, for another range, and once edited past the range's end", async () => {
    const range = { from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' };
    const device = uniqueImei();
    const cursor = await cursorFor(device, range);
    const [cursorImei, fromMs, toMs] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, number, number, string];
    const pastTheEnd = Buffer.from(JSON.stringify([cursorImei, fromMs, toMs, String(toMs * 1000)])).toString('base64url');

    for (const [label, target, params] of [
      ['another device', uniqueImei(), { cursor }],
      ['another range', device, { ...range, to: '2026-11-20T12:00:00Z', cursor }],
      ['edited', device, { cursor: pastTheEnd }],
    ] as const) {
      const res = await history(target, params);
      expect({ label, status: res.status, detail: res.body.detail }).toEqual({
        label,
        status: 400,
        detail: expect.stringMatching(/^cursor: /),
      });
    }
    expect((await history(device, { ...range, cursor })).status).toBe(200);
  });

  test('without a token, both routes respond 401 E-G1/1-01 before looking at the imei', async () => {
    for (const path of [
      `${DEVICES_PATH}/${imei}/last-location`,
      `${DEVICES_PATH}/${imei}/trip-locations`,
      `${DEVICES_PATH}/%zz/last-location`,
    ]) {
      const res = await getJson(path, {});
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 401,
        body: { code: 'E-G1/1-01', message: 'Authentication token is required' },
      });
    }
  });

  test('an expired token responds 400 E-V1/1-03', async () => {
    const expired = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    const res = await lastLocation(imei, { authorization: `Bearer ${expired}` });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'E-V1/1-03', message: expect.any(String), detail: 'Context creation failed: jwt expired' });
  });

  test('another method responds 405 with Allow: GET, HEAD', async () => {
    const res = await postJson(`${stack.url}${DEVICES_PATH}/${imei}/last-location`, {}, auth);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.body.code).toBe('E-N1/1-03');
  });
});

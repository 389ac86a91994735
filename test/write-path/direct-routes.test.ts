// The hot routes are served two ways: their canonical request by the direct routes, any other form of
// it (a trailing slash, other letter case, a percent-encoded parameter) by the express app. A client
// must not be able to tell which: the status, the body, the headers the gateway sets, what is stored and
// the route label of the request metric are the same either way.
import { buildCategory, insertCategory } from '../categories/category-support';
import { buildGroup, buildTrip, closeDb, db, signToken, TEST_API_KEY, uniqueImei, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { scrape } from '../support/scrape';
import { CATEGORY_BASE_PATH, DEVICES_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let bearer: string;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'direct-routes' });
  bearer = `Bearer ${await signToken()}`;
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

interface Answered {
  status: number;
  body: any;
  headers: Record<string, string>;
}

/** Headers whose values differ between any two answers. */
const PER_ANSWER = ['date', 'x-request-id', 'content-length'];

async function send(path: string, init: RequestInit = {}): Promise<Answered> {
  const response = await fetch(`${stack.url}${path}`, init);
  const text = await response.text();
  const headers = Object.fromEntries([...response.headers].filter(([name]) => !PER_ANSWER.includes(name)));
  expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers };
}

const postJson = (path: string, body: unknown, headers: Record<string, string> = { authorization: bearer }) =>
  send(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function requestsCounted(method: string, route: string, status: string): Promise<number> {
  const metrics = await scrape(`${stack.url}/metrics`);
  return metrics.value('fleet_http_request_duration_seconds_count', { method, route, status }) ?? 0;
}

/** Both forms' answers, and how many requests each added to the route's metric. */
async function bothWays(
  method: string,
  route: string,
  send: (form: 'direct' | 'express') => Promise<Answered>,
): Promise<{ direct: Answered; express: Answered }> {
  const direct = await send('direct');
  const status = String(direct.status);
  const before = await requestsCounted(method, route, status);
  const express = await send('express');
  expect(await requestsCounted(method, route, status)).toBe(before + 1);
  expect(express.headers).toEqual(direct.headers);
  return { direct, express };
}

async function storedPosition(imei: string): Promise<number> {
  const result = await db().query<{ count: string }>('SELECT count(*) FROM trip_locations WHERE imei = $1', [imei]);
  return Number(result.rows[0]!.count);
}

describe('the category read', () => {
  const route = `${CATEGORY_BASE_PATH}/:id`;

  test('answers the same body by its path and with a trailing slash', async () => {
    const category = await insertCategory(buildCategory());
    const path = (form: string) => `${CATEGORY_BASE_PATH}/${category.id}${form === 'express' ? '/' : ''}`;
    const { direct, express } = await bothWays('GET', route, (form) => send(path(form), { headers: { authorization: TEST_API_KEY } }));
    expect(direct.status).toBe(200);
    expect(direct.body.data.id).toBe(category.id);
    expect(express).toEqual(direct);
  });

  test('refuses a request without its key alike, and a bad id alike', async () => {
    const id = (await insertCategory(buildCategory())).id;
    const unkeyed = await bothWays('GET', route, (form) => send(`${CATEGORY_BASE_PATH}/${id}${form === 'express' ? '/' : ''}`));
    expect(unkeyed.direct.status).toBe(401);
    expect(unkeyed.express).toEqual(unkeyed.direct);

    const badId = await bothWays('GET', route, (form) =>
      send(`${CATEGORY_BASE_PATH}/not-a-uuid${form === 'express' ? '/' : ''}`, { headers: { authorization: TEST_API_KEY } }),
    );
    expect(badId.direct.status).toBe(400);
    expect(badId.express).toEqual(badId.direct);
  });
});

describe('the writes', () => {
  const trip = TRIP_LOCATION_PATH;

  test('a trip is stored and answered alike by its path and with a trailing slash', async () => {
    const imeis = { direct: uniqueImei(), express: uniqueImei() };
    const { direct, express } = await bothWays('POST', trip, (form) =>
      postJson(form === 'direct' ? trip : `${trip}/`, buildTrip({ imei: imeis[form] })),
    );
    expect(direct.status).toBe(200);
    expect(express.status).toBe(200);
    expect(express.body.data.id).toEqual(expect.any(Number));
    expect(direct.body.data.id).toEqual(expect.any(Number));
    expect(await storedPosition(imeis.direct)).toBe(1);
    expect(await storedPosition(imeis.express)).toBe(1);
  });

  test('a bad trip, and one without a token, are refused alike', async () => {
    const invalid = await bothWays('POST', trip, (form) =>
      postJson(form === 'direct' ? trip : trip.toUpperCase(), buildTrip({ latitude: 'north', gpsTime: 'yesterday' })),
    );
    expect(invalid.direct.status).toBe(400);
    expect(invalid.express).toEqual(invalid.direct);

    const unsigned = await bothWays('POST', trip, (form) => postJson(form === 'direct' ? trip : `${trip}/`, buildTrip(), {}));
    expect(unsigned.direct.status).toBe(401);
    expect(unsigned.express).toEqual(unsigned.direct);
  });

  test('a batch and a vehicle group are answered alike', async () => {
    const batch = `${trip}/batch`;
    const imeis = { direct: uniqueImei(), express: uniqueImei() };
    const batches = await bothWays('POST', batch, (form) =>
      postJson(form === 'direct' ? batch : `${batch}/`, [buildTrip({ imei: imeis[form] }), buildTrip({ imei: imeis[form], speed: -1 })]),
    );
    expect(batches.direct.status).toBe(200);
    expect(batches.direct.body.data.rejected).toBe(1);
    expect(batches.express.body.data.rejected).toBe(1);
    expect(batches.express.body.data.items[1]).toEqual(batches.direct.body.data.items[1]);
    expect(await storedPosition(imeis.express)).toBe(1);

    const group = VEHICLE_GROUP_PATH;
    const groups = await bothWays('POST', group, (form) => postJson(form === 'direct' ? group : `${group}/`, buildGroup()));
    expect(groups.direct.status).toBe(200);
    expect(groups.express.status).toBe(200);
    expect(groups.express.body.data.id).not.toBe(groups.direct.body.data.id);
  });
});

describe('the position reads', () => {
  test('last-location and history answer alike for a plain and a percent-encoded imei', async () => {
    const imei = `DR${uniqueImei().slice(2)}`;
    const posted = await postJson(TRIP_LOCATION_PATH, buildTrip({ imei }));
    expect(posted.status).toBe(200);
    const encoded = `%${imei.charCodeAt(0).toString(16)}${imei.slice(1)}`;

    const last = await bothWays('GET', `${DEVICES_PATH}/:imei/last-location`, (form) =>
      send(`${DEVICES_PATH}/${form === 'direct' ? imei : encoded}/last-location`, { headers: { authorization: bearer } }),
    );
    expect(last.direct.status).toBe(200);
    expect(last.direct.body.data.id).toBe(posted.body.data.id);
    expect(last.express).toEqual(last.direct);

    const query = `from=${encodeURIComponent(new Date(Date.now() - 12 * 86_400_000).toISOString())}&limit=5`;
    const history = await bothWays('GET', `${DEVICES_PATH}/:imei/trip-locations`, (form) =>
      send(`${DEVICES_PATH}/${form === 'direct' ? imei : encoded}/trip-locations?${query}`, { headers: { authorization: bearer } }),
    );
    expect(history.direct.status).toBe(200);
    expect(history.direct.body.data.map((position: { id: number }) => position.id)).toEqual([posted.body.data.id]);
    expect(history.express).toEqual(history.direct);

    const badLimit = await bothWays('GET', `${DEVICES_PATH}/:imei/trip-locations`, (form) =>
      send(`${DEVICES_PATH}/${form === 'direct' ? imei : encoded}/trip-locations?limit=0`, { headers: { authorization: bearer } }),
    );
    expect(badLimit.direct.status).toBe(400);
    expect(badLimit.express).toEqual(badLimit.direct);
  });
});

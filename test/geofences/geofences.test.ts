// Geofences over HTTP: created from a GeoJSON Polygon or a circle, read back, paged, deleted; a polygon
// the events could not be computed on is refused with a 400 naming what is wrong, and nothing is stored.
import { testClient, type ApiClient } from '../support/api-client';
import { closeDb, db, signToken, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { startStack } from '../support/stack';
import { GEOFENCES_PATH } from '../../services/gateway/src/http/routes';
import { PAGE_MAX_BYTES } from '../../services/gateway/src/page-bytes';
import { readEveryPage } from '../support/pages';
import { squareGeofence, squareRing } from '../support/geofence-areas';

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'geofences', env: { JWT_DEVICE_CLAIM: 'device_id' } });
  api = await testClient(stack);
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const storedNamed = async (name: string) => (await db().query('SELECT id FROM geofences WHERE name = $1', [name])).rowCount;

test('a polygon is created, answered with its id, and read back as it was given', async () => {
  const created = await api.post(GEOFENCES_PATH, squareGeofence('Depot north'));
  expect(created.status).toBe(200);
  expect(created.body).toEqual({
    message: 'Geofence has been created',
    data: { id: expect.any(Number), ...squareGeofence('Depot north') },
  });
  const read = await api.get(`${GEOFENCES_PATH}/${created.body.data.id}`);
  expect(read.status).toBe(200);
  expect(read.body.data).toEqual(created.body.data);
});

test('a circle is created without a speed limit of its own', async () => {
  const circle = { name: 'Yard', area: { type: 'Circle', center: [106.85, -6.21], radiusMeters: 500 } };
  const created = await api.post(GEOFENCES_PATH, circle);
  expect(created.status).toBe(200);
  expect(created.body.data).toEqual({ id: expect.any(Number), ...circle, speedLimitKmh: null });
});

test.each([
  [
    'a ring that is not closed',
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ],
      ],
    },
    'A ring must be closed: its last position its first',
  ],
  [
    'a ring that crosses itself (a bow tie)',
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
          [0, 0],
        ],
      ],
    },
    'A ring must not cross itself',
  ],
  [
    'a ring whose positions all lie on one line',
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 1],
          [2, 2],
          [0, 0],
        ],
      ],
    },
    'A ring must enclose an area: its positions all lie on one line',
  ],
  [
    'a hole outside the outer ring',
    { type: 'Polygon', coordinates: [squareRing(0, 0, 1), squareRing(5, 5, 1)] },
    'A hole must lie inside the outer ring, apart from it',
  ],
  [
    'more than 1,000 positions',
    {
      type: 'Polygon',
      coordinates: [
        [...Array.from({ length: 1001 }, (_, i) => [Math.cos((2 * Math.PI * i) / 1001), Math.sin((2 * Math.PI * i) / 1001)]), [1, 0]],
      ],
    },
    'A polygon may have at most 1000 positions',
  ],
  [
    'a latitude beyond 90',
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 91],
          [1, 0],
          [0, 0],
        ],
      ],
    },
    undefined,
  ],
  ['a circle without a radius', { type: 'Circle', center: [0, 0] }, undefined],
])('%s is refused with a 400, and nothing is stored', async (_case, area, message) => {
  const name = `refused-${Math.random()}`;
  const refused = await api.post(GEOFENCES_PATH, { name, area });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe('E-V1/1-01');
  if (message) expect(refused.body.issues).toContainEqual(expect.objectContaining({ message }));
  expect(await storedNamed(name)).toBe(0);
});

test('a ring of 40,000 positions is refused for its size before any ring is walked, and the gateway goes on answering', async () => {
  const ring = [...Array.from({ length: 40_000 }, (_, i) => [i % 2, Math.floor(i / 2) % 90]), [0, 0]];
  const refused = await api.post(GEOFENCES_PATH, { name: 'Huge', area: { type: 'Polygon', coordinates: [ring] } });
  expect(refused.status).toBe(400);
  expect(refused.body.issues).toEqual([expect.objectContaining({ message: 'A polygon may have at most 1000 positions' })]);
  expect((await api.get(GEOFENCES_PATH)).status).toBe(200);
});

test('polygons of 999 vertices come in pages of about PAGE_MAX_BYTES, however high the limit, every one once', async () => {
  const ring = Array.from({ length: 999 }, (_, i) => [
    106.8 + 0.01 * Math.cos((2 * Math.PI * i) / 999),
    -6.2 + 0.01 * Math.sin((2 * Math.PI * i) / 999),
  ]);
  const area = { type: 'Polygon', coordinates: [[...ring, ring[0]!]] };
  const ids: number[] = [];
  // 40 of about 40 KB each: some 1.6 MB, where one page of the limit asked would hold them all.
  for (let index = 0; index < 40; index += 1) ids.push((await api.post(GEOFENCES_PATH, { name: `Round ${index}`, area })).body.data.id);

  const { items, pageBytes } = await readEveryPage<{ id: number }>(`${stack.url}${GEOFENCES_PATH}?limit=1000`, {
    authorization: api.authorization!,
  });
  const seen = items.map((geofence) => geofence.id);

  expect(seen).toEqual(expect.arrayContaining(ids));
  expect(new Set(seen).size).toBe(seen.length);
  expect(pageBytes.length).toBeGreaterThanOrEqual(2);
  expect(Math.max(...pageBytes)).toBeLessThanOrEqual(PAGE_MAX_BYTES);
});

test('the list is keyset-paged oldest first, and a deleted geofence is gone: 404 on a read and on a second delete', async () => {
  const ids: number[] = [];
  for (const name of ['Page one', 'Page two', 'Page three']) ids.push((await api.post(GEOFENCES_PATH, squareGeofence(name))).body.data.id);
  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await api.get(`${GEOFENCES_PATH}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    expect(page.body.data.length).toBeLessThanOrEqual(2);
    seen.push(...page.body.data.map((geofence: { id: number }) => geofence.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(seen).toEqual([...seen].sort((a, b) => a - b));
  expect(seen).toEqual(expect.arrayContaining(ids));

  const deleted = await api.post(GEOFENCES_PATH, squareGeofence('Short-lived'));
  const id = deleted.body.data.id as number;
  const removal = await api.delete(`${GEOFENCES_PATH}/${id}`);
  expect({ status: removal.status, body: removal.body }).toEqual({
    status: 200,
    body: { message: 'Geofence has been deleted', data: { id } },
  });
  expect((await api.get(`${GEOFENCES_PATH}/${id}`)).body).toMatchObject({ code: 'E-N1/1-07' });
  const again = await api.delete(`${GEOFENCES_PATH}/${id}`);
  expect(again.status).toBe(404);
});

test('a token bound to one device reads the geofences but may not create or delete one', async () => {
  const deviceToken = `Bearer ${await signToken({ device_id: '359632104565789' })}`;
  const device = api.as(deviceToken);
  expect((await device.get(GEOFENCES_PATH)).status).toBe(200);
  const refused = await device.post(GEOFENCES_PATH, squareGeofence('Not allowed'));
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('E-G1/1-03');
  expect(await storedNamed('Not allowed')).toBe(0);
});

test('an id that is not a positive integer is a 400, another method on the path a 405 naming the methods it takes', async () => {
  expect((await api.get(`${GEOFENCES_PATH}/abc`)).status).toBe(400);
  const put = await fetch(`${stack.url}${GEOFENCES_PATH}/1`, { method: 'PUT', headers: { authorization: api.authorization! } });
  expect(put.status).toBe(405);
  expect(put.headers.get('allow')).toBe('GET, HEAD, DELETE');
});

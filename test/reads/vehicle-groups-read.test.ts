// Vehicle groups read back over real HTTP, against the groups the group-writer stored.
import { closeKafka } from '../support/kafka';
import { buildGroup, closeDb, db, postJson, signToken, type Stack } from '../support/harness';
import { FLEET_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';
import { PAGE_MAX_BYTES } from '../../services/gateway/src/page-bytes';
import { readEveryPage } from '../support/pages';

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'group-reads' });
  auth = { authorization: `Bearer ${await signToken()}` };
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

async function created(group: Record<string, unknown>): Promise<number> {
  const res = await postJson(`${stack.url}${VEHICLE_GROUP_PATH}`, group, auth);
  if (res.status !== 200) throw new Error(`creating a group answered ${res.status}`);
  return res.body.data.id;
}

describe('GET /fleet/api/v1/vehicle-group/{id}', () => {
  test('answers the group as created: its name, its vehicle ids once each in ascending order, and when it was stored', async () => {
    const group = buildGroup({ vehicleIds: [30, 10, 20, 10] });
    const id = await created(group);

    const res = await get(`${VEHICLE_GROUP_PATH}/${id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: { id, vehicleGroupName: group.vehicleGroupName, vehicleIds: [10, 20, 30], createdAt: expect.any(String) },
    });
    const stored = await db().query('SELECT created_at FROM vehicle_groups WHERE id = $1', [id]);
    expect(res.body.data.createdAt).toBe(stored.rows[0].created_at.toISOString());
  });

  test('an id no group has answers 404, a malformed id 400, and no token 401', async () => {
    expect(await get(`${VEHICLE_GROUP_PATH}/999999999999`)).toMatchObject({ status: 404, body: { code: 'E-N1/1-06' } });
    expect(await get(`${VEHICLE_GROUP_PATH}/abc`)).toMatchObject({ status: 400, body: { code: 'E-V1/1-06' } });
    expect(await get(`${VEHICLE_GROUP_PATH}/1`, {})).toMatchObject({ status: 401, body: { code: 'E-G1/1-01' } });
  });
});

describe('GET /fleet/api/v1/vehicle-groups', () => {
  test('pages through every group once, oldest first, following nextCursor until it is null', async () => {
    const ids = [];
    for (let i = 0; i < 5; i += 1) ids.push(await created(buildGroup()));
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`${FLEET_PATH}/vehicle-groups?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((group: { id: number }) => group.id));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10_000);

    const all = (await db().query('SELECT id FROM vehicle_groups ORDER BY id')).rows.map((row) => Number(row.id));
    expect(seen).toEqual(all);
    expect(seen).toEqual(expect.arrayContaining(ids));
  });

  test('groups of 10,000 vehicles come in pages of about PAGE_MAX_BYTES, however high the limit, each whole and once', async () => {
    const vehicleIds = Array.from({ length: 10_000 }, (_, index) => 1_000_000_000 + index);
    const ids: number[] = [];
    // 12 of about 110 KB each: some 1.3 MB, where one page of the limit asked would hold them all.
    for (let i = 0; i < 12; i += 1) ids.push(await created(buildGroup({ vehicleIds })));

    const { items, pageBytes } = await readEveryPage<{ id: number; vehicleIds: number[] }>(
      `${stack.url}${FLEET_PATH}/vehicle-groups?limit=1000`,
      auth,
    );
    const seen = items.map((group) => group.id);

    expect(seen).toEqual(expect.arrayContaining(ids));
    expect(new Set(seen).size).toBe(seen.length);
    expect(items.filter((group) => ids.includes(group.id)).map((group) => group.vehicleIds)).toEqual(ids.map(() => vehicleIds));
    expect(pageBytes.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...pageBytes)).toBeLessThanOrEqual(PAGE_MAX_BYTES);
  });

  test('a bad limit or a cursor this service did not issue answers 400 naming it', async () => {
    expect(await get(`${FLEET_PATH}/vehicle-groups?limit=0`)).toMatchObject({
      status: 400,
      body: { detail: expect.stringMatching(/^limit: /) },
    });
    expect(await get(`${FLEET_PATH}/vehicle-groups?cursor=zzz`)).toMatchObject({
      status: 400,
      body: { detail: expect.stringMatching(/^cursor: /) },
    });
  });
});

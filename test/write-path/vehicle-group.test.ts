import { randomUUID } from 'node:crypto';
import { buildGroup, closeDb, db, postJson, signToken, startStack, type Stack } from '../support/harness';

let stack: Stack;
let url: string;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack('vehicle-group');
  url = `${stack.url}/fleet/api/v1/vehicle-group`;
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeDb();
});

async function groupsNamed(name: unknown) {
  return (await db().query('SELECT * FROM vehicle_groups WHERE name = $1', [name])).rows;
}

async function membersOf(id: number) {
  const result = await db().query('SELECT vehicle_id FROM vehicle_group_members WHERE vehicle_group_id = $1 ORDER BY vehicle_id', [id]);
  return result.rows.map((row) => Number(row.vehicle_id));
}

test('a group is created with its members, duplicates collapsed, and the information names it', async () => {
  const group = buildGroup({ vehicleIds: [7, 3, 7, 5, 3] });
  const res = await postJson(url, group, auth);

  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    message: 'Vehicle group has been created',
    data: { id: expect.any(Number), information: `Vehicle group "${group.vehicleGroupName}" has been created` },
  });
  const [stored] = await groupsNamed(group.vehicleGroupName);
  expect(Number(stored.id)).toBe(res.body.data.id);
  expect(await membersOf(res.body.data.id)).toEqual([3, 5, 7]);
});

test('a group with an empty vehicle list is created with no members', async () => {
  const res = await postJson(url, buildGroup({ vehicleIds: [] }), auth);
  expect(res.status).toBe(200);
  expect(await membersOf(res.body.data.id)).toEqual([]);
});

test('a client retry with the same Idempotency-Key gets the same id and creates one group', async () => {
  const group = buildGroup();
  const headers = { ...auth, 'idempotency-key': randomUUID() };
  const first = await postJson(url, group, headers);
  const retry = await postJson(url, group, headers);

  expect(first.status).toBe(200);
  expect(retry.status).toBe(200);
  expect(retry.body.data.id).toBe(first.body.data.id);
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
});

test('two posts without an Idempotency-Key are two groups, even with the same name', async () => {
  const group = buildGroup();
  const [a, b] = await Promise.all([postJson(url, group, auth), postJson(url, group, auth)]);
  expect(a.body.data.id).not.toBe(b.body.data.id);
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(2);
});

test('a form-urlencoded body responds 415 and creates nothing', async () => {
  const name = `Form group ${randomUUID()}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ vehicleGroupName: name, vehicleIds: '1' }).toString(),
  });
  expect(res.status).toBe(415);
  expect(await res.json()).toEqual({
    code: 'E-V1/1-04',
    message: 'Unsupported content type',
    detail: 'Content-Type must be application/json',
  });
  expect(await groupsNamed(name)).toHaveLength(0);
});

test('vehicle ids given as strings respond 400 naming the element', async () => {
  const res = await postJson(url, buildGroup({ vehicleIds: [1, '2'] }), auth);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: 'vehicleIds.1: Expected an integer' });
});

test('10,001 vehicle ids respond 400 and create nothing', async () => {
  const group = buildGroup({ vehicleIds: Array.from({ length: 10_001 }, (_, i) => i + 1) });
  const res = await postJson(url, group, auth);
  expect(res.status).toBe(400);
  expect(res.body.detail).toBe('vehicleIds: Must contain at most 10000 ids');
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(0);
});

test('a blank name responds 400 naming vehicleGroupName', async () => {
  const res = await postJson(url, buildGroup({ vehicleGroupName: '   ' }), auth);
  expect(res.status).toBe(400);
  expect(res.body.detail).toBe('vehicleGroupName: Must not be empty');
});

test('without a token responds 401 and creates nothing', async () => {
  const group = buildGroup();
  const res = await postJson(url, group);
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ code: 'E-G1/1-01', message: 'Authentication token is required' });
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(0);
});

test('with an expired token responds 400 E-V1/1-03', async () => {
  const token = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 1 });
  const res = await postJson(url, buildGroup(), { authorization: `Bearer ${token}` });
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    code: 'E-V1/1-03',
    message: 'An error occurred while executing the query',
    detail: 'Context creation failed: jwt expired',
  });
});

import { randomUUID } from 'node:crypto';
import { buildGroup, closeDb, commandsPublishedSettled, db, postJson, signToken, startWriter, type Stack } from '../support/harness';
import { closeKafka, commandsPublished } from '../support/kafka';
import { VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let url: string;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'vehicle-group' });
  url = `${stack.url}${VEHICLE_GROUP_PATH}`;
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function groupsNamed(name: unknown) {
  return (await db().query('SELECT * FROM vehicle_groups WHERE name = $1', [name])).rows;
}

/**
 * Refused means refused: no command reached the writers since `publishedBefore`, and no group holds the
 * request's name. (Looking for the row alone would pass as well while a publish was still on its way.)
 */
async function expectNothingCreated(name: unknown, publishedBefore: number) {
  expect(await commandsPublishedSettled(stack)).toBe(publishedBefore);
  expect(await groupsNamed(name)).toHaveLength(0);
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

// A key of any length the API accepts reaches the group-writer: a key near the limit once grew past the
// writer's own limit behind its internal prefix and was dead-lettered, so the client waited out a 503.
test.each([1, 199, 200])(
  'an Idempotency-Key of %i characters responds 200, and a retry with it lands on the same group',
  async (length) => {
    const group = buildGroup();
    const key = randomUUID().replace(/-/g, '').repeat(7).slice(0, length);
    const headers = { ...auth, 'idempotency-key': key };
    const first = await postJson(url, group, headers);
    const retry = await postJson(url, group, headers);

    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.body.data.id).toBe(first.body.data.id);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  },
);

test('an Idempotency-Key of 201 characters responds 400 naming the header and creates nothing', async () => {
  const group = buildGroup();
  const res = await postJson(url, group, { ...auth, 'idempotency-key': 'k'.repeat(201) });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: 'Idempotency-Key: must be 1 to 200 characters' });
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(0);
});

test('two posts without an Idempotency-Key are two groups, even with the same name', async () => {
  const group = buildGroup();
  const [a, b] = await Promise.all([postJson(url, group, auth), postJson(url, group, auth)]);
  expect(a.body.data.id).not.toBe(b.body.data.id);
  expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(2);
});

test('a form-urlencoded body responds 415 and creates nothing', async () => {
  const name = `Form group ${randomUUID()}`;
  const published = await commandsPublished(stack.prefix);
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
  await expectNothingCreated(name, published);
});

test('vehicle ids given as strings respond 400 naming the element, and create nothing', async () => {
  const group = buildGroup({ vehicleIds: [1, '2'] });
  const published = await commandsPublished(stack.prefix);
  const res = await postJson(url, group, auth);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: 'vehicleIds.1: Expected an integer' });
  await expectNothingCreated(group.vehicleGroupName, published);
});

test('10,001 vehicle ids respond 400 and create nothing', async () => {
  const group = buildGroup({ vehicleIds: Array.from({ length: 10_001 }, (_, i) => i + 1) });
  const published = await commandsPublished(stack.prefix);
  const res = await postJson(url, group, auth);
  expect(res.status).toBe(400);
  expect(res.body.detail).toBe('vehicleIds: Must contain at most 10000 ids');
  await expectNothingCreated(group.vehicleGroupName, published);
});

test('a blank name responds 400 naming vehicleGroupName, and creates nothing', async () => {
  const published = await commandsPublished(stack.prefix);
  const res = await postJson(url, buildGroup({ vehicleGroupName: '   ' }), auth);
  expect(res.status).toBe(400);
  expect(res.body.detail).toBe('vehicleGroupName: Must not be empty');
  await expectNothingCreated('   ', published);
  expect(await groupsNamed('')).toHaveLength(0);
});

test.each([
  ['a C1 control character (U+0085)', 'Depot\u0085North', 'Must not contain control characters'],
  ['a C1 control character (U+009F)', 'Depot \u009f', 'Must not contain control characters'],
  ['a right-to-left override (U+202E)', 'Trucks \u202Egnp.exe', 'Must not contain bidirectional control characters'],
  ['a left-to-right embedding (U+202A)', '\u202AFleet', 'Must not contain bidirectional control characters'],
  ['a first-strong isolate (U+2068)', 'Fleet \u2068A\u2069', 'Must not contain bidirectional control characters'],
  ['only zero-width characters', '\u200B\u200C\u200D\u2060\uFEFF', 'Must contain a visible character'],
  ['only Hangul fillers and blank braille', '\u3164 \u115F\u2800', 'Must contain a visible character'],
])('a name with %s responds 400 naming vehicleGroupName, and creates nothing', async (_label, name, message) => {
  const group = buildGroup({ vehicleGroupName: name });
  const res = await postJson(url, group, auth);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    code: 'E-V1/1-01',
    detail: `vehicleGroupName: ${message}`,
    issues: [{ path: 'vehicleGroupName', code: 'invalid_string', message }],
  });
  expect(await groupsNamed(name)).toHaveLength(0);
  expect(await groupsNamed(name.trim())).toHaveLength(0);
});

test('a name of 150 emoji (300 UTF-16 units) is within the 200-character limit and is stored as sent', async () => {
  const name = '\u{1F69A}'.repeat(150);
  const res = await postJson(url, buildGroup({ vehicleGroupName: name }), auth);
  expect(res.status).toBe(200);
  expect(await groupsNamed(name)).toHaveLength(1);
});

test('a name of 201 characters responds 400 "Must be at most 200 characters"', async () => {
  const res = await postJson(url, buildGroup({ vehicleGroupName: '\u{1F69A}'.repeat(201) }), auth);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    code: 'E-V1/1-01',
    detail: 'vehicleGroupName: Must be at most 200 characters',
    issues: [{ path: 'vehicleGroupName', code: 'too_big', message: 'Must be at most 200 characters' }],
  });
});

test('without a token responds 401 and creates nothing', async () => {
  const group = buildGroup();
  const published = await commandsPublished(stack.prefix);
  const res = await postJson(url, group);
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ code: 'E-G1/1-01', message: 'Authentication token is required' });
  await expectNothingCreated(group.vehicleGroupName, published);
});

test('with an expired token responds 400 E-V1/1-03 and creates nothing', async () => {
  const token = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 1 });
  const group = buildGroup();
  const published = await commandsPublished(stack.prefix);
  const res = await postJson(url, group, { authorization: `Bearer ${token}` });
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    code: 'E-V1/1-03',
    message: 'An error occurred while executing the query',
    detail: 'Context creation failed: jwt expired',
  });
  await expectNothingCreated(group.vehicleGroupName, published);
});

// A 503 does not say whether the group was stored: the command may still reach a group-writer. The
// answer hands the client the create's key, and a retry with it lands on that group, not a second one.
describe('when no group-writer confirms the create in time', () => {
  let unconfirmed: Stack;
  let groupUrl: string;

  beforeAll(async () => {
    unconfirmed = await startStack({
      mode: 'in-process',
      label: 'vehicle-group-unconfirmed',
      groupWriters: 0,
      env: { REPLY_TIMEOUT_MS: '1000' },
    });
    groupUrl = `${unconfirmed.url}${VEHICLE_GROUP_PATH}`;
  });
  afterAll(async () => {
    await unconfirmed?.stop();
  });

  test('a keyless create responds 503 with the key it was given, and a retry with that key after the writer is back creates one group', async () => {
    const group = buildGroup({ vehicleIds: [11, 12] });
    const first = await postJson(groupUrl, group, auth);

    expect(first.status).toBe(503);
    expect(first.body).toEqual({
      code: 'E-S1/1-02',
      message: 'The vehicle group was not confirmed; retry with the Idempotency-Key header of this response to create it exactly once',
      detail: expect.any(String),
    });
    expect(first.headers.get('retry-after')).toBe('1');
    const key = first.headers.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);

    unconfirmed.groupWriters.push(await startWriter('group', unconfirmed.env));
    // The new writer may still be joining its consumer group: each unconfirmed retry hands back the same key.
    let retry = await postJson(groupUrl, group, { ...auth, 'idempotency-key': key! });
    for (let attempt = 1; retry.status === 503 && attempt < 30; attempt += 1) {
      expect(retry.headers.get('idempotency-key')).toBe(key);
      retry = await postJson(groupUrl, group, { ...auth, 'idempotency-key': key! });
    }

    expect(retry.status).toBe(200);
    const stored = await groupsNamed(group.vehicleGroupName);
    expect(stored).toHaveLength(1);
    expect(Number(stored[0].id)).toBe(retry.body.data.id);
    expect(await membersOf(retry.body.data.id)).toEqual([11, 12]);
  });

  test("a 503 on a create with the client's own key carries that key back", async () => {
    const writers = unconfirmed.groupWriters.splice(0);
    await Promise.all(writers.map((writer) => writer.stop()));
    const key = `client-key-${randomUUID()}`;
    const res = await postJson(groupUrl, buildGroup(), { ...auth, 'idempotency-key': key });
    expect(res.status).toBe(503);
    expect(res.headers.get('idempotency-key')).toBe(key);
  });
});

describe('under load, with the group-writer stopped for a while', () => {
  const CREATES = 300;
  const CLIENTS = 30;
  let loaded: Stack;
  let groupUrl: string;

  beforeAll(async () => {
    loaded = await startStack({ mode: 'in-process', label: 'vehicle-group-load', env: { REPLY_TIMEOUT_MS: '1000' } });
    groupUrl = `${loaded.url}${VEHICLE_GROUP_PATH}`;
  });
  afterAll(async () => {
    await loaded?.stop();
  });

  test('clients that retry each 503 with the key it returned end up with exactly one group per create, members as sent', async () => {
    const creates = Array.from({ length: CREATES }, (_, index) => ({
      group: buildGroup({ vehicleGroupName: `Load ${index} ${randomUUID().slice(0, 8)}`, vehicleIds: [index + 1, index + 1001] }),
      id: 0,
      unconfirmed: 0,
      unkeyed503s: 0,
    }));
    let confirmed = 0;
    let unconfirmedTotal = 0;
    const progress = new Set<() => void>();
    const reached = (check: () => boolean) =>
      new Promise<void>((resolve) => {
        const listener = () => {
          if (!check()) return;
          progress.delete(listener);
          resolve();
        };
        progress.add(listener);
        listener();
      });

    // A client that knows nothing of keys, except to retry with the one a 503 hands it.
    async function create(entry: (typeof creates)[number]): Promise<void> {
      let key: string | undefined;
      for (let attempt = 1; attempt <= 60; attempt += 1) {
        const res = await postJson(groupUrl, entry.group, key ? { ...auth, 'idempotency-key': key } : auth);
        if (res.status === 200) {
          entry.id = res.body.data.id;
          confirmed += 1;
          for (const listener of progress) listener();
          return;
        }
        expect(res.status).toBe(503);
        entry.unconfirmed += 1;
        unconfirmedTotal += 1;
        for (const listener of progress) listener();
        const returned = res.headers.get('idempotency-key');
        if (returned === null) entry.unkeyed503s += 1;
        key = returned ?? key;
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
      }
      throw new Error(`${String(entry.group.vehicleGroupName)} was not confirmed in 60 attempts`);
    }

    let next = 0;
    const clients = Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < creates.length) await create(creates[next++]!);
      }),
    );

    await reached(() => confirmed >= CREATES / 5);
    const writers = loaded.groupWriters.splice(0);
    await Promise.all(writers.map((writer) => writer.stop()));
    await reached(() => unconfirmedTotal >= CLIENTS);
    loaded.groupWriters.push(await startWriter('group', loaded.env));
    await clients;

    expect(unconfirmedTotal).toBeGreaterThanOrEqual(CLIENTS);
    expect(creates.filter((entry) => entry.unkeyed503s > 0)).toEqual([]);
    const names = creates.map((entry) => entry.group.vehicleGroupName);
    const stored = await db().query<{ id: string; name: string; members: string[] }>(
      `SELECT g.id, g.name, array_agg(m.vehicle_id ORDER BY m.vehicle_id) AS members
         FROM vehicle_groups g JOIN vehicle_group_members m ON m.vehicle_group_id = g.id
        WHERE g.name = ANY($1::text[]) GROUP BY g.id`,
      [names],
    );
    const byName = new Map<string, Array<{ id: number; members: number[] }>>();
    for (const row of stored.rows) {
      byName.set(row.name, [...(byName.get(row.name) ?? []), { id: Number(row.id), members: row.members.map(Number) }]);
    }
    const mismatches = creates.filter((entry) => {
      const rows = byName.get(entry.group.vehicleGroupName as string) ?? [];
      return rows.length !== 1 || rows[0]!.id !== entry.id || JSON.stringify(rows[0]!.members) !== JSON.stringify(entry.group.vehicleIds);
    });
    expect(
      mismatches.map((entry) => ({ name: entry.group.vehicleGroupName, rows: byName.get(entry.group.vehicleGroupName as string) })),
    ).toEqual([]);
  }, 180_000);
});

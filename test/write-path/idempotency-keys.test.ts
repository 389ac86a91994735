// Idempotency-Keys over HTTP against the real stack: a key belongs to the token's subject, a key reused
// for another group is refused 422, and a key is forgotten once IDEMPOTENCY_KEY_TTL_HOURS (24 by
// default) have passed since the create that used it. Expiry is tested by backdating the group's
// created_at in the database, which is what the writer measures a key's age by.
import { randomUUID } from 'node:crypto';
import { buildGroup, closeDb, db, postJson, signToken, startWriter, type Stack } from '../support/harness';
import { eventually } from '../support/eventually';
import { closeKafka } from '../support/kafka';
import { VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let url: string;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'idempotency-keys' });
  url = `${stack.url}${VEHICLE_GROUP_PATH}`;
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function bearer(claims: Record<string, unknown> = {}, subject?: string | null) {
  return `Bearer ${await signToken(claims, { subject })}`;
}

async function create(group: Record<string, unknown>, authorization: string, key?: string) {
  return postJson(url, group, { authorization, ...(key === undefined ? {} : { 'idempotency-key': key }) });
}

async function groupsNamed(name: unknown) {
  return (await db().query('SELECT id, command_id FROM vehicle_groups WHERE name = $1 ORDER BY id', [name])).rows;
}

async function membersOf(id: number) {
  const result = await db().query('SELECT vehicle_id FROM vehicle_group_members WHERE vehicle_group_id = $1 ORDER BY vehicle_id', [id]);
  return result.rows.map((row) => Number(row.vehicle_id));
}

/** Makes a group look as if it had been created `hours` ago. */
async function backdate(id: number, hours: number) {
  await db().query(`UPDATE vehicle_groups SET created_at = now() - make_interval(hours => $2) WHERE id = $1`, [id, hours]);
}

describe('a key belongs to the subject of the token that sent it', () => {
  test('two subjects sending the same key get two groups, and each retry answers its own', async () => {
    const key = randomUUID();
    const alice = await bearer({}, `alice-${key}`);
    const bob = await bearer({}, `bob-${key}`);
    const aliceGroup = buildGroup({ vehicleIds: [1, 2] });
    const bobGroup = buildGroup({ vehicleIds: [3] });

    const first = await create(aliceGroup, alice, key);
    const second = await create(bobGroup, bob, key);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(second.body.data.information).toBe(`Vehicle group "${bobGroup.vehicleGroupName}" has been created`);

    expect((await create(aliceGroup, alice, key)).body.data.id).toBe(first.body.data.id);
    expect((await create(bobGroup, bob, key)).body.data.id).toBe(second.body.data.id);
    expect(await membersOf(first.body.data.id)).toEqual([1, 2]);
    expect(await membersOf(second.body.data.id)).toEqual([3]);
  });

  test('the same sub from two issuers is two subjects', async () => {
    const key = randomUUID();
    const group = buildGroup();
    const one = await create(group, await bearer({ iss: 'https://one.example' }, 'shared-sub'), key);
    const two = await create(group, await bearer({ iss: 'https://two.example' }, 'shared-sub'), key);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.body.data.id).not.toBe(one.body.data.id);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(2);
  });

  test('a token without sub keeps its keys to itself: another such token with the same key gets its own group', async () => {
    const key = randomUUID();
    const group = buildGroup();
    const first = await bearer({ jti: 'first' }, null);
    const second = await bearer({ jti: 'second' }, null);

    const created = await create(group, first, key);
    const retried = await create(group, first, key);
    const other = await create(group, second, key);
    expect([created.status, retried.status, other.status]).toEqual([200, 200, 200]);
    expect(retried.body.data.id).toBe(created.body.data.id);
    expect(other.body.data.id).not.toBe(created.body.data.id);
  });
});

describe('a retry answers the group its key created', () => {
  test('the same body, even with ids reordered or repeated and the name padded, answers the same group', async () => {
    const authorization = await bearer();
    const key = randomUUID();
    const group = buildGroup({ vehicleIds: [5, 6, 7] });
    const first = await create(group, authorization, key);
    const again = await create({ vehicleGroupName: ` ${String(group.vehicleGroupName)} `, vehicleIds: [7, 5, 6, 5] }, authorization, key);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual(first.body);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  });

  test('concurrent identical creates with one key make one group and all answer its id', async () => {
    const authorization = await bearer();
    const key = randomUUID();
    const group = buildGroup();
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(group, authorization, key)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((answer) => answer.body.data.id)).size).toBe(1);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  });

  test('keyless creates still make a new group each time', async () => {
    const authorization = await bearer();
    const group = buildGroup();
    const first = await create(group, authorization);
    const second = await create(group, authorization);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });
});

describe('a key reused with another body', () => {
  test.each([
    ['another name', (group: Record<string, unknown>) => ({ ...group, vehicleGroupName: `${String(group.vehicleGroupName)} bis` })],
    ['other vehicle ids', (group: Record<string, unknown>) => ({ ...group, vehicleIds: [1, 2, 4] })],
  ])('with %s responds 422 E-V1/1-07 and stores nothing', async (_, change) => {
    const authorization = await bearer();
    const key = randomUUID();
    const group = buildGroup({ vehicleIds: [1, 2, 3] });
    const first = await create(group, authorization, key);
    expect(first.status).toBe(200);

    const changed: Record<string, unknown> = change(group);
    const reused = await create(changed, authorization, key);
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({
      code: 'E-V1/1-07',
      message: 'This Idempotency-Key was already used with a different request body',
      detail: expect.stringContaining('Idempotency-Key: this key created a group from another name or other vehicle ids'),
    });
    // The writer answered it and stored nothing for it: no new group, the first one unchanged.
    const named = await db().query('SELECT id FROM vehicle_groups WHERE name = ANY($1::text[])', [
      [group.vehicleGroupName, changed.vehicleGroupName],
    ]);
    expect(named.rows.map((row) => Number(row.id))).toEqual([first.body.data.id]);
    expect(await membersOf(first.body.data.id)).toEqual([1, 2, 3]);
    // The key still answers its own group.
    expect((await create(group, authorization, key)).body.data.id).toBe(first.body.data.id);
  });
});

test('two different bodies racing with one key: one creates the group, the other is refused 422', async () => {
  const authorization = await bearer();
  const key = randomUUID();
  const bodies = [buildGroup(), buildGroup()];
  const answers = await Promise.all(bodies.map((body) => create(body, authorization, key)));
  expect(answers.map((answer) => answer.status).sort()).toEqual([200, 422]);
  const winner = answers.find((answer) => answer.status === 200)!;
  const named = await db().query('SELECT id FROM vehicle_groups WHERE name = ANY($1::text[])', [
    bodies.map((body) => body.vehicleGroupName),
  ]);
  expect(named.rows.map((row) => Number(row.id))).toEqual([winner.body.data.id]);
});

describe('a key is remembered for 24 hours, then forgotten', () => {
  test('23 hours after the create, a retry still answers the first group', async () => {
    const authorization = await bearer();
    const key = randomUUID();
    const group = buildGroup();
    const first = await create(group, authorization, key);
    await backdate(first.body.data.id, 23);

    const retry = await create(group, authorization, key);
    expect(retry.status).toBe(200);
    expect(retry.body.data.id).toBe(first.body.data.id);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  });

  test('25 hours after the create, the same key creates a new group, and another body is no longer refused', async () => {
    const authorization = await bearer();
    const key = randomUUID();
    const group = buildGroup({ vehicleIds: [11] });
    const first = await create(group, authorization, key);
    await backdate(first.body.data.id, 25);

    const later = await create(group, authorization, key);
    expect(later.status).toBe(200);
    expect(later.body.data.id).not.toBe(first.body.data.id);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(2);
    expect(await membersOf(first.body.data.id)).toEqual([11]);
    // From now on the key is the new group's.
    expect((await create(group, authorization, key)).body.data.id).toBe(later.body.data.id);

    await backdate(later.body.data.id, 25);
    const reusedAfterExpiry = await create(buildGroup(), authorization, key);
    expect(reusedAfterExpiry.status).toBe(200);
  });

  test("a group-writer clears the expired keys from the table, and leaves the others' alone", async () => {
    const authorization = await bearer();
    const expired = await create(buildGroup(), authorization, randomUUID());
    const fresh = await create(buildGroup(), authorization, randomUUID());
    await backdate(expired.body.data.id, 25);

    // A writer purges once when it starts, then every 15 minutes.
    const writer = await startWriter('group', stack.env);
    stack.groupWriters.push(writer);
    const keyOf = async (id: number) =>
      (await db().query('SELECT command_id, request_fingerprint FROM vehicle_groups WHERE id = $1', [id])).rows[0];
    await eventually(async () => (await keyOf(expired.body.data.id)).command_id === null, 20_000, {
      what: 'the expired key to be cleared',
    });
    expect(await keyOf(expired.body.data.id)).toEqual({ command_id: null, request_fingerprint: null });
    expect((await keyOf(fresh.body.data.id)).command_id).not.toBeNull();
  });
});

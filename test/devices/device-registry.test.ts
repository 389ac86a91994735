// The device registry over real HTTP and the CLI, against the run's PostgreSQL: what an operator sees
// when registering trackers, and what the database keeps (never the key itself).
import { createHash } from 'node:crypto';
import { runDevicesCli } from '../../services/gateway/src/cli/devices';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { closeKafka } from '../support/kafka';
import { closeDb, db, postJson, signToken, testServers, uniqueDeviceImei, type Stack } from '../support/harness';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let url: string;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'device-registry' });
  url = `${stack.url}${DEVICES_PATH}`;
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function storedDevice(imei: string) {
  const result = await db().query('SELECT * FROM devices WHERE imei = $1', [imei]);
  return result.rows[0];
}

/** Runs `npm run devices -- ...` in this process against the run's database. */
async function devicesCli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDevicesCli(args, {
    env: { DATABASE_URL: testServers().databaseUrl },
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { code, out, err };
}

const osmand = (key: string, imei: string) =>
  fetch(`${stack.url}/osmand/${key}?id=${imei}&lat=52.5&lon=13.4&timestamp=${Math.floor(Date.now() / 1000)}`);

describe('POST /fleet/api/v1/devices', () => {
  test('registers a device and answers its key once; only the key’s SHA-256 is stored', async () => {
    const imei = uniqueDeviceImei();
    const res = await postJson(url, { imei, name: 'Truck 7' }, auth);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: { imei, name: 'Truck 7', key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
    });
    const row = await storedDevice(imei);
    expect(row.key_hash).toEqual(createHash('sha256').update(res.body.data.key).digest());
    expect(JSON.stringify(row)).not.toContain(res.body.data.key);
    expect((await osmand(res.body.data.key, imei)).status).toBe(200);
  });

  test('the same IMEI again answers 409, and the first key stays the one that works', async () => {
    const imei = uniqueDeviceImei();
    const first = await postJson(url, { imei }, auth);
    const again = await postJson(url, { imei, name: 'other' }, auth);

    expect(again.status).toBe(409);
    expect(again.body).toEqual({ code: 'E-C1/1-01', message: 'This device is already registered', detail: expect.stringContaining(imei) });
    expect((await storedDevice(imei)).name).toBeNull();
    expect((await osmand(first.body.data.key, imei)).status).toBe(200);
  });

  test.each([
    ['empty', ''],
    ['with a space', '35693 8035643809'],
    ['of 33 characters', 'x'.repeat(33)],
    ['a number, not a string', 356938035643809],
  ])('an invalid device id (%s) answers 400 naming imei, and nothing is stored', async (_case, imei) => {
    const res = await postJson(url, { imei }, auth);

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'E-V1/1-01', issues: [expect.objectContaining({ path: 'imei' })] });
    expect(await storedDevice(String(imei))).toBeUndefined();
  });

  test('without a token answers 401 and registers nothing', async () => {
    const imei = uniqueDeviceImei();
    const res = await postJson(url, { imei });

    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'E-G1/1-01' });
    expect(await storedDevice(imei)).toBeUndefined();
  });
});

describe('device ids', () => {
  test("any id the positions take is registered, such as Traccar Client's default 6-digit identifier, and its OsmAnd posts are stored", async () => {
    const id = String(100_000 + Math.floor(Math.random() * 900_000));
    const res = await postJson(url, { imei: id }, auth);

    expect(res.status).toBe(200);
    expect((await osmand(res.body.data.key, id)).status).toBe(200);
    expect((await db().query('SELECT count(*)::int AS n FROM trip_locations WHERE imei = $1', [id])).rows[0].n).toBe(1);
  });
});

describe('device names', () => {
  test.each([
    ['a NUL', 'Van\u00003', 'Must not contain control characters'],
    ['a line break', 'Van 3\n356938035643809\tforged', 'Must not contain control characters'],
    ['a tab', 'Van\t3', 'Must not contain control characters'],
    ['a right-to-left override', 'Van \u202e3', 'Must not contain bidirectional control characters'],
    ['201 emoji', '🚚'.repeat(201), 'Must be at most 200 characters'],
    ['only a zero-width space', '\u200b', 'Must contain a visible character'],
  ])('with %s answer 400 naming name, and register nothing', async (_label, name, message) => {
    const imei = uniqueDeviceImei();
    const res = await postJson(url, { imei, name }, auth);

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'E-V1/1-01', detail: `name: ${message}` });
    expect(await storedDevice(imei)).toBeUndefined();
  });

  test('are counted in characters: 200 emoji are a name, stored as sent', async () => {
    const imei = uniqueDeviceImei();
    const res = await postJson(url, { imei, name: '🚚'.repeat(200) }, auth);

    expect(res.status).toBe(200);
    expect((await storedDevice(imei)).name).toBe('🚚'.repeat(200));
  });
});

describe('a token bound to one device', () => {
  let bound: Gateway;
  beforeAll(async () => {
    bound = await startGateway(gatewayConfig({ ...stack.env, JWT_DEVICE_CLAIM: 'imei' }));
  });
  afterAll(() => bound?.stop());

  test('registers no device, another or its own, even with devices:write: 403, and nothing is stored', async () => {
    const own = uniqueDeviceImei();
    const token = { authorization: `Bearer ${await signToken({ imei: own, scope: 'devices:write positions:write' })}` };
    for (const imei of [uniqueDeviceImei(), own]) {
      const res = await postJson(`${bound.url}${DEVICES_PATH}`, { imei }, token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'E-G1/1-03',
        message: 'The token is bound to one device and may act only for it',
        detail: 'a token bound to one device may not register devices',
      });
      expect(await storedDevice(imei)).toBeUndefined();
    }
  });
});

describe('npm run devices', () => {
  test('add prints the key alone on stdout, and the device is listed with its name', async () => {
    const imei = uniqueDeviceImei();
    const added = await devicesCli('add', imei, '--name', 'Van 3');

    expect(added).toMatchObject({ code: 0, out: [expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)] });
    const listed = await devicesCli('list');
    expect(listed.out.find((line) => line.startsWith(imei))).toMatch(new RegExp(`^${imei}\\tVan 3\\tregistered `));
    expect((await osmand(added.out[0]!, imei)).status).toBe(200);
  });

  test('rotate-key gives a new key that works, and the old one is refused', async () => {
    const imei = uniqueDeviceImei();
    const [oldKey] = (await devicesCli('add', imei)).out;
    const rotated = await devicesCli('rotate-key', imei);

    expect(rotated.code).toBe(0);
    expect(rotated.out[0]).not.toBe(oldKey);
    expect((await osmand(oldKey!, imei)).status).toBe(401);
    expect((await osmand(rotated.out[0]!, imei)).status).toBe(200);
  });

  test('remove takes the device out of the registry and keeps its positions; removing it again fails', async () => {
    const imei = uniqueDeviceImei();
    const [key] = (await devicesCli('add', imei)).out;
    expect((await osmand(key!, imei)).status).toBe(200);

    expect(await devicesCli('remove', imei)).toMatchObject({ code: 0 });
    expect(await storedDevice(imei)).toBeUndefined();
    expect((await db().query('SELECT count(*)::int AS n FROM trip_locations WHERE imei = $1', [imei])).rows[0].n).toBe(1);
    expect(await devicesCli('remove', imei)).toMatchObject({ code: 1, err: [`device ${imei} is not registered`] });
  });

  test('list prints a stored name with control and bidirectional characters escaped, so it cannot forge a line or a column', async () => {
    const imei = uniqueDeviceImei();
    await devicesCli('add', imei);
    // As a name stored before such names were refused would be.
    await db().query('UPDATE devices SET name = $2 WHERE imei = $1', [imei, 'Van\n356938035643809\tregistered \u202eX']);

    const line = (await devicesCli('list')).out.find((listed) => listed.startsWith(imei));
    expect(line).toMatch(new RegExp(`^${imei}\\tVan\\\\u000a356938035643809\\\\u0009registered \\\\u202eX\\tregistered `));
  });

  test('add refuses a name with a control character, exit code 2', async () => {
    expect(await devicesCli('add', uniqueDeviceImei(), '--name', 'Van\t3')).toMatchObject({
      code: 2,
      err: [expect.stringContaining('name: Must not contain control characters')],
    });
  });

  test('refuses a bad command line with the usage and exit code 2, touching nothing', async () => {
    expect(await devicesCli('add', 'not an id')).toMatchObject({
      code: 2,
      err: [expect.stringContaining('imei: Must contain only printable ASCII characters without spaces')],
    });
    expect(await devicesCli('frobnicate')).toMatchObject({ code: 2, err: [expect.stringContaining('usage: npm run devices')] });
    expect(await devicesCli('remove', uniqueDeviceImei(), '--name', 'x')).toMatchObject({ code: 2 });
  });
});

// Tokens that mean something, over HTTP against the real stack: with JWT_REQUIRED_SCOPES each route
// demands its scope, and with JWT_DEVICE_CLAIM=imei a token carrying an imei writes only that device's
// positions. A second gateway on the same topics, with neither set, shows that both are off by default.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import {
  buildGroup,
  buildTrip,
  closeDb,
  commandsPublishedSettled,
  db,
  postJson,
  signToken,
  TEST_JWT_SECRET,
  uniqueDeviceImei,
  uniqueImei,
  type Stack,
} from '../support/harness';
import { closeKafka, commandsPublished } from '../support/kafka';
import { DEVICES_PATH, TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const BATCH = TRIP_LOCATION_BATCH_PATH;
const GROUP = VEHICLE_GROUP_PATH;

let stack: Stack;
/** The same topics and writers, behind a gateway with the defaults: no scope and no device checks. */
let lenient: Gateway;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'token-scopes', env: { JWT_REQUIRED_SCOPES: 'true', JWT_DEVICE_CLAIM: 'imei' } });
  const { JWT_REQUIRED_SCOPES: _scopes, JWT_DEVICE_CLAIM: _claim, ...defaults } = stack.env;
  lenient = await startGateway(gatewayConfig(defaults));
});
afterAll(async () => {
  await lenient?.stop();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function bearer(claims: Record<string, unknown>) {
  return { authorization: `Bearer ${await signToken(claims)}` };
}

async function storedImeis(...imeis: string[]) {
  const result = await db().query('SELECT imei FROM trip_locations WHERE imei = ANY($1::text[]) ORDER BY imei', [imeis]);
  return result.rows.map((row) => row.imei as string);
}

async function groupsNamed(name: unknown) {
  return (await db().query('SELECT id FROM vehicle_groups WHERE name = $1', [name])).rows;
}

/**
 * Refused means refused: nothing reached the writers since `before` (a row check alone could race a
 * publish). Settled with a trip this gateway accepts.
 */
async function expectNothingPublishedSince(before: number) {
  expect(await commandsPublishedSettled(stack, { url: stack.url, ...(await bearer({ scope: 'positions:write' })) })).toBe(before);
}

function scopeRefusal(scope: string) {
  return {
    code: 'E-G1/1-02',
    message: 'The token does not grant this operation',
    detail: `the token's scope claim lacks ${scope}`,
  };
}

describe('JWT_REQUIRED_SCOPES=true', () => {
  const ALL = 'positions:write groups:write positions:read';

  test.each([
    ['no scope claim', {}],
    ['other scopes only', { scope: 'groups:write positions:read' }],
    ['a scope that only starts like it', { scope: 'positions:writer' }],
    ['the scope as an array', { scope: ['positions:write'] }],
  ])('a trip location with %s responds 403 naming positions:write and stores nothing', async (_, claims) => {
    const trip = buildTrip();
    const answer = await postJson(`${stack.url}${TRIP}`, trip, await bearer(claims));
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(scopeRefusal('positions:write'));
    expect(answer.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="positions:write"');
    expect(await storedImeis(trip.imei as string)).toEqual([]);
  });

  test('a batch without positions:write responds 403 naming it and stores nothing', async () => {
    const trips = [buildTrip(), buildTrip()];
    const before = await commandsPublished(stack.prefix);
    const answer = await postJson(`${stack.url}${BATCH}`, trips, await bearer({ scope: 'groups:write' }));
    expect(answer.status).toBe(403);
    await expectNothingPublishedSince(before);
    expect(answer.body).toEqual(scopeRefusal('positions:write'));
    expect(await storedImeis(...trips.map((trip) => trip.imei as string))).toEqual([]);
  });

  test('a vehicle group without groups:write responds 403 naming it and creates nothing', async () => {
    const group = buildGroup();
    const answer = await postJson(`${stack.url}${GROUP}`, group, await bearer({ scope: 'positions:write positions:read' }));
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(scopeRefusal('groups:write'));
    expect(await groupsNamed(group.vehicleGroupName)).toEqual([]);
  });

  test('registering a device without devices:write responds 403 naming it and registers nothing; with it, 200', async () => {
    const imei = uniqueDeviceImei();
    const devices = `${stack.url}${DEVICES_PATH}`;
    const answer = await postJson(devices, { imei }, await bearer({ scope: 'positions:write groups:write positions:read' }));
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(scopeRefusal('devices:write'));
    expect((await db().query('SELECT imei FROM devices WHERE imei = $1', [imei])).rows).toEqual([]);
    expect((await postJson(devices, { imei }, await bearer({ scope: 'devices:write' }))).status).toBe(200);
  });

  test('the scope is checked before the body is read: a token without it and an invalid body is a 403', async () => {
    const answer = await postJson(`${stack.url}${TRIP}`, '{"imei":', await bearer({}));
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe('E-G1/1-02');
  });

  test('with its scope, among others, each route stores: trip 200, batch 200, group 200', async () => {
    const auth = await bearer({ scope: ALL });
    const trip = buildTrip();
    const batch = [buildTrip(), buildTrip()];
    const group = buildGroup();

    expect((await postJson(`${stack.url}${TRIP}`, trip, await bearer({ scope: 'positions:write' }))).status).toBe(200);
    const batchAnswer = await postJson(`${stack.url}${BATCH}`, batch, auth);
    expect(batchAnswer.status).toBe(200);
    expect(batchAnswer.body.data).toMatchObject({ accepted: 2, rejected: 0 });
    expect((await postJson(`${stack.url}${GROUP}`, group, await bearer({ scope: ' groups:write ' }))).status).toBe(200);

    const imeis = [trip, ...batch].map((position) => position.imei as string);
    expect(await storedImeis(...imeis)).toEqual([...imeis].sort());
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  });

  test.each(['last-location', 'trip-locations'])(
    'a position read (%s) without positions:read responds 403 naming it; with it, the position written',
    async (read) => {
      const trip = buildTrip();
      expect((await postJson(`${stack.url}${TRIP}`, trip, await bearer({ scope: 'positions:write' }))).status).toBe(200);
      const path = `${stack.url}${DEVICES_PATH}/${trip.imei as string}/${read}`;
      const from = new Date(Date.parse(trip.gpsTime as string) - 1000).toISOString();
      const query = read === 'trip-locations' ? `?from=${encodeURIComponent(from)}` : '';

      const refused = await fetch(`${path}${query}`, { headers: await bearer({ scope: 'positions:write groups:write' }) });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="positions:read"');
      expect(await refused.json()).toEqual(scopeRefusal('positions:read'));

      const allowed = await fetch(`${path}${query}`, { headers: await bearer({ scope: 'positions:read' }) });
      expect(allowed.status).toBe(200);
      const { data } = (await allowed.json()) as { data: { imei: string } | Array<{ imei: string }> };
      expect([data].flat().map((position) => position.imei)).toEqual([trip.imei]);
    },
  );
});

describe('JWT_DEVICE_CLAIM=imei', () => {
  const write = 'positions:write';

  test("a token carrying an imei writes that device's position: 200 and stored", async () => {
    const imei = uniqueImei();
    const answer = await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), await bearer({ imei, scope: write }));
    expect(answer.status).toBe(200);
    expect(await storedImeis(imei)).toEqual([imei]);
  });

  test("a token carrying an imei posting another device's position responds 403 E-G1/1-03 and stores nothing", async () => {
    const own = uniqueImei();
    const other = uniqueImei();
    const before = await commandsPublished(stack.prefix);
    const answer = await postJson(`${stack.url}${TRIP}`, buildTrip({ imei: other }), await bearer({ imei: own, scope: write }));
    expect(answer.status).toBe(403);
    await expectNothingPublishedSince(before);
    expect(answer.body).toEqual({
      code: 'E-G1/1-03',
      message: 'The token is bound to one device and may act only for it',
      detail: 'imei: not the device this token is for',
    });
    expect(await storedImeis(own, other)).toEqual([]);
  });

  test("another device's position is refused 403 even when it is invalid otherwise", async () => {
    const answer = await postJson(
      `${stack.url}${TRIP}`,
      buildTrip({ imei: uniqueImei(), latitude: 91 }),
      await bearer({ imei: uniqueImei(), scope: write }),
    );
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe('E-G1/1-03');
  });

  test('a batch with one position of another device responds 403 naming it, and stores none of the batch', async () => {
    const own = uniqueImei();
    const other = uniqueImei();
    const batch = [buildTrip({ imei: own }), buildTrip({ imei: own }), buildTrip({ imei: other })];
    const before = await commandsPublished(stack.prefix);
    const answer = await postJson(`${stack.url}${BATCH}`, batch, await bearer({ imei: own, scope: write }));
    expect(answer.status).toBe(403);
    await expectNothingPublishedSince(before);
    expect(answer.body).toEqual({
      code: 'E-G1/1-03',
      message: 'The token is bound to one device and may act only for it',
      detail: '[2].imei: not the device this token is for',
    });
    expect(await storedImeis(own, other)).toEqual([]);
  });

  test("a batch of the token's own device is stored, its invalid positions answered per item as always", async () => {
    const own = uniqueImei();
    const batch = [buildTrip({ imei: own }), buildTrip({ imei: own, latitude: 91 }), buildTrip({ imei: own })];
    const answer = await postJson(`${stack.url}${BATCH}`, batch, await bearer({ imei: own, scope: write }));
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ accepted: 2, rejected: 1 });
    expect(answer.body.data.items[1].error.code).toBe('E-V1/1-01');
    expect(await storedImeis(own)).toEqual([own, own]);
  });

  test.each(['last-location', 'trip-locations'])(
    "a token carrying an imei reads its own device's %s, and another device's is refused 403 E-G1/1-03, by either path",
    async (read) => {
      const own = buildTrip();
      const other = buildTrip();
      for (const trip of [own, other]) {
        expect((await postJson(`${stack.url}${TRIP}`, trip, await bearer({ scope: write }))).status).toBe(200);
      }
      const auth = await bearer({ imei: own.imei, scope: 'positions:read' });
      const query = read === 'trip-locations' ? `?from=${encodeURIComponent(new Date(Date.now() - 12 * 86_400_000).toISOString())}` : '';

      const allowed = await fetch(`${stack.url}${DEVICES_PATH}/${own.imei as string}/${read}${query}`, { headers: auth });
      expect(allowed.status).toBe(200);
      // The direct route takes the canonical path; a percent-encoded one goes through express.
      const encodedOther = [...(other.imei as string)]
        .map((char, at) => (at === 0 ? `%${char.charCodeAt(0).toString(16)}` : char))
        .join('');
      for (const imei of [other.imei as string, encodedOther]) {
        const refused = await fetch(`${stack.url}${DEVICES_PATH}/${imei}/${read}${query}`, { headers: auth });
        expect(refused.status).toBe(403);
        expect(await refused.json()).toEqual({
          code: 'E-G1/1-03',
          message: 'The token is bound to one device and may act only for it',
          detail: 'imei: not the device this token is for',
        });
      }
    },
  );

  test('an imei claim written as a JSON number is compared as its digits', async () => {
    const imei = `9${Date.now().toString().slice(-12)}`;
    const answer = await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), await bearer({ imei: Number(imei), scope: write }));
    expect(answer.status).toBe(200);
    expect(await storedImeis(imei)).toEqual([imei]);
  });

  test('an imei claim that is neither text nor a whole number writes nothing: 403', async () => {
    const imei = uniqueImei();
    const answer = await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), await bearer({ imei: [imei], scope: write }));
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'E-G1/1-03', detail: "the token's imei claim is neither a string nor a whole number" });
    expect(await storedImeis(imei)).toEqual([]);
  });

  test('a token without the claim (a fleet application) writes any device, single and batch', async () => {
    const auth = await bearer({ scope: write });
    const trip = buildTrip();
    const batch = [buildTrip(), buildTrip()];
    expect((await postJson(`${stack.url}${TRIP}`, trip, auth)).status).toBe(200);
    expect((await postJson(`${stack.url}${BATCH}`, batch, auth)).body.data).toMatchObject({ accepted: 2, rejected: 0 });
    const imeis = [trip, ...batch].map((position) => position.imei as string);
    expect(await storedImeis(...imeis)).toEqual([...imeis].sort());
  });
});

describe('with JWT_REQUIRED_SCOPES and JWT_DEVICE_CLAIM unset', () => {
  test('a token without any scope writes a trip, a batch and a group', async () => {
    const auth = await bearer({});
    const trip = buildTrip();
    const group = buildGroup();
    expect((await postJson(`${lenient.url}${TRIP}`, trip, auth)).status).toBe(200);
    expect((await postJson(`${lenient.url}${BATCH}`, [buildTrip()], auth)).status).toBe(200);
    expect((await postJson(`${lenient.url}${GROUP}`, group, auth)).status).toBe(200);
    expect(await storedImeis(trip.imei as string)).toEqual([trip.imei]);
    expect(await groupsNamed(group.vehicleGroupName)).toHaveLength(1);
  });

  test('a token without any scope reads positions', async () => {
    const answer = await fetch(`${lenient.url}${DEVICES_PATH}/${uniqueImei()}/last-location`, { headers: await bearer({}) });
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ code: 'E-N1/1-04' });
  });

  test('a token carrying an imei is not restricted by it', async () => {
    const other = uniqueImei();
    const answer = await postJson(`${lenient.url}${TRIP}`, buildTrip({ imei: other }), await bearer({ imei: uniqueImei() }));
    expect(answer.status).toBe(200);
    expect(await storedImeis(other)).toEqual([other]);
  });
});

describe('npm run dev-token', () => {
  const cli = path.resolve(__dirname, '../../deploy/local/dist/dev-token.js');

  function devToken(args: string[], env: Record<string, string> = {}): string {
    const run = spawnSync(process.execPath, [cli, ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, JWT_SECRET: TEST_JWT_SECRET, ...env },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    return run.stdout.trim();
  }

  test('--imei and --scope mint a token the gateway restricts to that device and those scopes', async () => {
    const imei = uniqueImei();
    const token = devToken(['tracker-7', '1h', '--imei', imei, '--scope', 'positions:write  positions:read']);
    expect(decodeJwt(token)).toMatchObject({ sub: 'tracker-7', imei, scope: 'positions:write positions:read' });

    const auth = { authorization: `Bearer ${token}` };
    expect((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei }), auth)).status).toBe(200);
    expect((await postJson(`${stack.url}${TRIP}`, buildTrip(), auth)).status).toBe(403);
    expect((await postJson(`${stack.url}${GROUP}`, buildGroup(), auth)).body).toEqual(scopeRefusal('groups:write'));
    expect(await storedImeis(imei)).toEqual([imei]);
  });

  test('--imei puts the claim JWT_DEVICE_CLAIM names', () => {
    const token = devToken(['--imei', '123456789012345'], { JWT_DEVICE_CLAIM: 'device_id' });
    const claims = decodeJwt(token);
    expect(claims.device_id).toBe('123456789012345');
    expect(claims.imei).toBeUndefined();
    expect(claims.scope).toBeUndefined();
  });
});

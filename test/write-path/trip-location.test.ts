import { SignJWT } from 'jose';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { closeKafka, messagesIn } from '../support/kafka';
import { buildTrip, closeDb, db, postForm, postJson, signToken, TEST_JWT_SECRET, type Stack } from '../support/harness';
import {
  DEVICES_PATH,
  GEOFENCES_PATH,
  TRIP_LOCATION_BATCH_PATH,
  TRIP_LOCATION_PATH,
  VEHICLE_GROUP_PATH,
  WEBHOOKS_PATH,
} from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let url: string;
let auth: { authorization: string };

beforeAll(async () => {
  // The last leap second was in 2016: the past is opened that far for the test of its reading.
  stack = await startStack({ mode: 'in-process', label: 'trip-location', env: { MAX_PAST_AGE: '20y' } });
  url = `${stack.url}${TRIP_LOCATION_PATH}`;
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function storedRows(imei: unknown) {
  const result = await db().query('SELECT * FROM trip_locations WHERE imei = $1 ORDER BY id', [imei]);
  return result.rows;
}

describe('storing', () => {
  test('a JSON post is stored with every field and type as sent, and answered with the row id', async () => {
    const trip = buildTrip({ gpsTime: '2026-11-22T15:30:00.250+07:00' });
    const res = await postJson(url, trip, auth);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'Trip location has been recorded',
      data: { id: expect.any(Number), information: expect.stringContaining(String(trip.imei)) },
    });
    const [row] = await storedRows(trip.imei);
    expect(row).toMatchObject({
      id: String(res.body.data.id),
      imei: trip.imei,
      latitude: trip.latitude,
      longitude: trip.longitude,
      speed: trip.speed,
      ignition: true,
      angle: 180,
      satellite: 9,
      door1: false,
      door2: true,
      temp: 4.5,
      fuel_percentage: 63.2,
    });
    expect(row.gps_time.toISOString()).toBe('2026-11-22T08:30:00.250Z');
    expect(row.received_at).toBeInstanceOf(Date);
  });

  test('a form post is stored with numbers as numbers and ignition=false as false', async () => {
    const trip = buildTrip();
    const res = await postForm(
      url,
      {
        imei: String(trip.imei),
        gpsTime: '2026-11-22 08:30:00',
        latitude: '-6.5',
        longitude: '106.25',
        speed: '0',
        ignition: 'false',
        door1: '1',
        satellite: '4',
      },
      auth,
    );

    expect(res.status).toBe(200);
    const [row] = await storedRows(trip.imei);
    expect(row).toMatchObject({
      latitude: -6.5,
      longitude: 106.25,
      speed: 0,
      ignition: false,
      door1: true,
      satellite: 4,
      door2: null,
      temp: null,
    });
    expect(row.gps_time.toISOString()).toBe('2026-11-22T08:30:00.000Z');
  });

  test('optional fields left out are stored as NULL', async () => {
    const { imei, gpsTime, latitude, longitude, speed, ignition } = buildTrip();
    const res = await postJson(url, { imei, gpsTime, latitude, longitude, speed, ignition }, auth);
    expect(res.status).toBe(200);
    const [row] = await storedRows(imei);
    expect(row).toMatchObject({ angle: null, satellite: null, door1: null, door2: null, temp: null, fuel_percentage: null });
  });

  test('a repeated post of the same position (a device retry) returns the same id and stores one row', async () => {
    const trip = buildTrip();
    const first = await postJson(url, trip, auth);
    // The same instant written another way is the same position.
    const again = await postJson(url, { ...trip, gpsTime: Date.parse(String(trip.gpsTime)) }, auth);

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.information).toContain('already recorded');
    expect(await storedRows(trip.imei)).toHaveLength(1);
  });

  test('100 concurrent posts are all stored, each with its own id', async () => {
    const imei = String(buildTrip().imei);
    const base = Date.UTC(2026, 10, 22, 0, 0, 0);
    const posts = Array.from({ length: 100 }, (_, i) =>
      postJson(url, buildTrip({ imei, gpsTime: new Date(base + i * 1000).toISOString() }), auth),
    );
    const responses = await Promise.all(posts);

    expect(responses.map((res) => res.status)).toEqual(Array(100).fill(200));
    const ids = responses.map((res) => res.body.data.id);
    expect(new Set(ids).size).toBe(100);
    const rows = await storedRows(imei);
    expect(rows.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  });
});

describe('authentication', () => {
  async function expectRefused(headers: Record<string, string>, status: number, body: Record<string, unknown>, target = url) {
    const trip = buildTrip();
    const before = await messagesIn(`${stack.prefix}.trip-locations`);
    const res = await postJson(target, trip, headers);
    expect(res.status).toBe(status);
    expect(res.body).toEqual(body);
    // A refused request stores nothing and publishes nothing.
    expect(await messagesIn(`${stack.prefix}.trip-locations`)).toBe(before);
    expect(await storedRows(trip.imei)).toHaveLength(0);
  }

  const required = { code: 'E-G1/1-01', message: 'Authentication token is required' };
  const invalid = (cause: string) => ({
    code: 'E-V1/1-03',
    message: 'An error occurred while executing the query',
    detail: `Context creation failed: ${cause}`,
  });

  test('without an Authorization header, responds 401 E-G1/1-01', () => expectRefused({}, 401, required));

  test('with "Bearer" and nothing after it, responds 401 E-G1/1-01', () => expectRefused({ authorization: 'Bearer ' }, 401, required));

  test('when the token is expired, responds 400 E-V1/1-03 "jwt expired"', async () => {
    const token = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt expired'));
  });

  test('when the token is malformed, responds 400 E-V1/1-03 "jwt malformed"', async () => {
    await expectRefused({ authorization: 'Bearer not-a-jwt' }, 400, invalid('jwt malformed'));
    await expectRefused({ authorization: 'Bearer aaaa.bbbb.cccc' }, 400, invalid('jwt malformed'));
  });

  test('when the header carries more than one token, responds 400 "jwt malformed", not 401: a token was sent', async () => {
    const token = await signToken();
    await expectRefused({ authorization: 'Bearer a b' }, 400, invalid('jwt malformed'));
    await expectRefused({ authorization: `Bearer Bearer ${token}` }, 400, invalid('jwt malformed'));
    await expectRefused({ authorization: `Bearer ${token}, Bearer ${token}` }, 400, invalid('jwt malformed'));
    await expectRefused({ authorization: `Bearer ${token},${token}` }, 400, invalid('jwt malformed'));
  });

  test('when the header names another scheme, responds 401 E-G1/1-01: no bearer token was sent', () =>
    expectRefused({ authorization: 'Basic dXNlcjpwYXNz' }, 401, required));

  test('when iat is more than the clock skew (60 s) in the future, responds 400 "jwt issued in the future"; within it, accepted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const issuedAt = (iat: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    await expectRefused({ authorization: `Bearer ${await issuedAt(now + 3600)}` }, 400, invalid('jwt issued in the future'));
    await expectRefused({ authorization: `Bearer ${await issuedAt(now + 120)}` }, 400, invalid('jwt issued in the future'));
    expect((await postJson(url, buildTrip(), { authorization: `Bearer ${await issuedAt(now + 30)}` })).status).toBe(200);
  });

  describe('with JWT_MAX_LIFETIME_SECONDS=3600', () => {
    let limited: Gateway;
    let limitedUrl: string;
    beforeAll(async () => {
      limited = await startGateway(gatewayConfig({ ...stack.env, JWT_MAX_LIFETIME_SECONDS: '3600' }));
      limitedUrl = `${limited.url}${TRIP_LOCATION_PATH}`;
    });
    afterAll(() => limited?.stop());

    test('a token living longer (exp - iat = 2 h) responds 400 "jwt lifetime exceeds 3600 seconds"', async () => {
      const token = await signToken({}, { expiresIn: '2h' });
      await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt lifetime exceeds 3600 seconds'), limitedUrl);
    });

    test('a token without iat responds 400 "jwt must have a numeric iat claim": its lifetime cannot be known', async () => {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt must have a numeric iat claim'), limitedUrl);
    });

    test('a token living exactly the limit is accepted', async () => {
      const token = await signToken({}, { expiresIn: '1h' });
      expect((await postJson(limitedUrl, buildTrip(), { authorization: `Bearer ${token}` })).status).toBe(200);
    });
  });

  test('when the signature is wrong, responds 400 naming the signature', async () => {
    const token = await signToken({}, { secret: 'another-secret-that-is-long-enough-for-hs256' });
    await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('invalid signature'));
  });

  test('when the token has no exp, responds 400', async () => {
    const token = await signToken({}, { expiresIn: null });
    await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt must have a numeric exp claim'));
  });

  test('when exp is written in milliseconds, responds 400', async () => {
    const token = await signToken({}, { expiresIn: Date.now() + 3_600_000 });
    await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt exp is not in seconds'));
  });

  test('when the token is not yet valid, responds 400 "jwt not active"', async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setNotBefore('1h')
      .setExpirationTime('2h')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    await expectRefused({ authorization: `Bearer ${token}` }, 400, invalid('jwt not active'));
  });

  test('when the token is signed with another algorithm (HS512) or none, responds 400 "jwt algorithm not allowed"', async () => {
    const hs512 = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS512' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    await expectRefused({ authorization: `Bearer ${hs512}` }, 400, invalid('jwt algorithm not allowed'));

    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
    await expectRefused({ authorization: `Bearer ${unsigned}` }, 400, invalid('jwt algorithm not allowed'));
  });

  test('the same valid token is accepted on every post (verified tokens are remembered until exp)', async () => {
    const headers = { authorization: `Bearer ${await signToken({}, { expiresIn: '10m' })}` };
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await postJson(url, buildTrip(), headers)).status);
    expect(statuses).toEqual([200, 200, 200]);
  });
});

describe('bad input', () => {
  test('an out-of-range latitude responds 400 naming the field, and stores nothing', async () => {
    const trip = buildTrip({ latitude: 91 });
    const res = await postJson(url, trip, auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'E-V1/1-01',
      message: 'The request body is invalid',
      detail: expect.stringMatching(/^latitude: /),
      issues: [{ path: 'latitude', code: 'too_big', message: expect.any(String) }],
    });
    expect(await storedRows(trip.imei)).toHaveLength(0);
  });

  test('a form ignition that is not a boolean word responds 400 naming ignition', async () => {
    const res = await postForm(url, { ...(buildTrip() as Record<string, string>), ignition: 'maybe' }, auth);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^ignition: /);
  });

  test('an unreadable gpsTime responds 400 naming gpsTime', async () => {
    const res = await postJson(url, buildTrip({ gpsTime: '22/11/2026 08:30' }), auth);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^gpsTime: /);
  });

  test('a gpsTime offset beyond ±14:00 responds 400 naming gpsTime, and stores nothing', async () => {
    for (const gpsTime of ['2026-11-22T08:30:00+14:30', '2026-11-22T08:30:00-15:00', '2026-11-22T08:30:00+2300']) {
      const trip = buildTrip({ gpsTime });
      const res = await postJson(url, trip, auth);
      expect({ gpsTime, status: res.status, detail: res.body.detail }).toEqual({
        gpsTime,
        status: 400,
        detail: expect.stringMatching(/^gpsTime: Expected ISO-8601 with an offset \(at most ±14:00\)/),
      });
      expect(await storedRows(trip.imei)).toHaveLength(0);
    }
    const easternmost = buildTrip({ gpsTime: '2026-11-22T22:30:00+14:00' });
    expect((await postJson(url, easternmost, auth)).status).toBe(200);
    expect((await storedRows(easternmost.imei))[0].gps_time.toISOString()).toBe('2026-11-22T08:30:00.000Z');
  });

  test('a leap second (23:59:60 UTC) is stored as the first second of the next day; second 60 elsewhere responds 400', async () => {
    const leap = buildTrip({ gpsTime: '2016-12-31T23:59:60Z' });
    expect((await postJson(url, leap, auth)).status).toBe(200);
    expect((await storedRows(leap.imei))[0].gps_time.toISOString()).toBe('2017-01-01T00:00:00.000Z');

    const notLeap = buildTrip({ gpsTime: '2026-11-22T08:30:60Z' });
    const res = await postJson(url, notLeap, auth);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^gpsTime: /);
    expect(await storedRows(notLeap.imei)).toHaveLength(0);
  });

  test('a form with 250 fields, most of them unknown, is stored; one with more than 1000 responds 413 "too many form fields"', async () => {
    const trip = Object.fromEntries(Object.entries(buildTrip()).map(([name, value]) => [name, String(value)]));
    const extra = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`extra${i}`, 'x']));
    const wide = { ...trip, ...extra(250 - Object.keys(trip).length) };
    expect(Object.keys(wide)).toHaveLength(250);
    expect((await postForm(url, wide, auth)).status).toBe(200);
    expect(await storedRows(trip.imei)).toHaveLength(1);

    const tooWide = buildTrip();
    const res = await postForm(
      url,
      { ...Object.fromEntries(Object.entries(tooWide).map(([name, value]) => [name, String(value)])), ...extra(1000) },
      auth,
    );
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 'E-V1/1-05', message: 'The request body is too large', detail: 'too many form fields' });
    expect(await storedRows(tooWide.imei)).toHaveLength(0);
  });

  test('malformed JSON responds 400 JSON', async () => {
    const res = await postJson(url, '{"imei": "1",', auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'E-V1/1-02', message: 'The request body could not be parsed', detail: 'the body is not valid JSON' });
  });

  test.each([
    [TRIP_LOCATION_PATH, 'null', 'Expected object, received null'],
    [TRIP_LOCATION_PATH, '42', 'Expected object, received number'],
    [VEHICLE_GROUP_PATH, '"Cold chain"', 'Expected object, received string'],
    [TRIP_LOCATION_BATCH_PATH, 'null', 'Expected an array of trip locations'],
    [DEVICES_PATH, 'null', 'Expected object, received null'],
    [GEOFENCES_PATH, 'true', 'Expected object, received boolean'],
    [WEBHOOKS_PATH, 'null', 'Expected object, received null'],
  ])(
    'a JSON body of %s that is %s, valid JSON but no object, is refused by its schema as invalid, not as unparsable',
    async (path, body, expected) => {
      const res = await postJson(`${stack.url}${path}`, body, auth);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'E-V1/1-01', message: 'The request body is invalid' });
      expect(res.body.issues).toEqual([expect.objectContaining({ path: '', message: expected })]);
    },
  );

  test('a body that is not valid UTF-8 responds 400 saying so, as JSON and as a form, and never echoes the body', async () => {
    const notUtf8 = { code: 'E-V1/1-02', message: 'The request body could not be parsed', detail: 'the body is not valid UTF-8' };
    const json = Buffer.concat([Buffer.from('{"imei":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const form = Buffer.concat([Buffer.from('imei='), Buffer.from([0xff, 0xfe])]);
    for (const [type, body] of [
      ['application/json', json],
      ['application/x-www-form-urlencoded', form],
    ] as const) {
      const res = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': type }, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(notUtf8);
    }
  });

  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const tooDeep = {
    code: 'E-V1/1-02',
    message: 'The request body could not be parsed',
    detail: 'the body nests arrays and objects more than 32 deep',
  };

  test.each([TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH, TRIP_LOCATION_BATCH_PATH, DEVICES_PATH, GEOFENCES_PATH, WEBHOOKS_PATH])(
    'a JSON body on %s nested 33 or 100,000 deep is refused before it is parsed; 32 deep is parsed and judged by the schema',
    async (path) => {
      for (const depth of [33, 100_000]) {
        const res = await postJson(`${stack.url}${path}`, nested(depth), auth);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(tooDeep);
      }
      const deepest = await postJson(`${stack.url}${path}`, `{"a":${nested(31)}}`, auth);
      expect(deepest.status).toBe(400);
      expect(deepest.body.code).toBe('E-V1/1-01');
    },
  );

  test('brackets inside strings are not nesting: a group named with 40 of them is stored, as UTF-8 and as UTF-16', async () => {
    const body = { vehicleGroupName: `${'['.repeat(20)}孛${'{'.repeat(20)}`, vehicleIds: [7] };
    const utf8 = await postJson(`${stack.url}${VEHICLE_GROUP_PATH}`, body, auth);
    expect(utf8.status).toBe(200);
    // UTF-16LE: ∀ is the bytes 00 22, a quote ending the string to a reader of bytes, and 孛 the bytes
    // 5B 5B, two opening brackets: 80 levels, were the body not read as its charset says.
    const utf16 = await fetch(`${stack.url}${VEHICLE_GROUP_PATH}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-16le' },
      body: Buffer.from(JSON.stringify({ vehicleGroupName: `∀${'孛'.repeat(40)}`, vehicleIds: [8] }), 'utf16le'),
    });
    expect(utf16.status).toBe(200);
    const { data } = (await utf16.json()) as { data: { id: number } };
    const stored = await db().query('SELECT name FROM vehicle_groups WHERE id = $1', [data.id]);
    expect(stored.rows[0].name).toBe(`∀${'孛'.repeat(40)}`);
    const deep = await fetch(`${stack.url}${VEHICLE_GROUP_PATH}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-16le' },
      body: Buffer.from(nested(33), 'utf16le'),
    });
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual(tooDeep);
  });

  test('an NDJSON batch counts each line on its own: a line left open does not deepen the next', async () => {
    const ndjson = { ...auth, 'content-type': 'application/x-ndjson' };
    const post = (body: string) => fetch(`${stack.url}${TRIP_LOCATION_BATCH_PATH}`, { method: 'POST', headers: ndjson, body });
    const open = await post(`${'['.repeat(20)}\n${nested(20)}\n`);
    expect(open.status).toBe(400);
    expect(await open.json()).toEqual({ ...tooDeep, detail: 'line 1 is not valid JSON' });
    const deep = await post(`${nested(1)}\n${nested(33)}\n`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual(tooDeep);
  });

  test('an unsupported content type responds 415 JSON', async () => {
    const res = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'imei=1' });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: 'E-V1/1-04' });
  });

  test('a body over 1 MiB responds 413 JSON', async () => {
    const res = await postJson(url, buildTrip({ padding: 'x'.repeat(1024 * 1024) }), auth);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'E-V1/1-05' });
  });

  test.each(['HEAD', 'OPTIONS', 'GET', 'PUT'])('%s on the write routes responds 405 JSON with Allow: POST, not 404', async (method) => {
    for (const path of [TRIP_LOCATION_PATH, TRIP_LOCATION_BATCH_PATH, VEHICLE_GROUP_PATH]) {
      const response = await fetch(`${stack.url}${path}`, { method, headers: auth });
      const text = await response.text();
      expect({ path, status: response.status, allow: response.headers.get('allow'), type: response.headers.get('content-type') }).toEqual({
        path,
        status: 405,
        allow: 'POST',
        type: 'application/json; charset=utf-8',
      });
      if (method !== 'HEAD') {
        expect(JSON.parse(text)).toEqual({
          code: 'E-N1/1-03',
          message: 'Method not allowed on this route',
          detail: `${method} is not served here; use POST`,
        });
      }
    }
  });

  test('an unknown route responds 404 JSON, not an HTML page', async () => {
    const res = await postJson(`${stack.url}/fleet/api/v1/nowhere`, {}, auth);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'E-N1/1-02', message: 'No such route' });
  });
});

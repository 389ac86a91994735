// Hostile request bodies on the write routes: compressed bombs and bodies over the limit, deeply nested
// JSON, prototype-polluting keys, repeated and bracketed form keys, bytes that are not UTF-8, SQL in
// every field, and bodies built to make the error answer huge. Every one is answered with a JSON 4xx
// or stored exactly as meant; none is a 500, and the process is left unharmed.
// (A plain JSON body over 1 MiB and 10,001 vehicle ids are in test/write-path.)
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { rawExchange } from './raw-http';
import { databaseState } from '../support/database-state';
import { closeKafka, commandsPublished } from '../support/kafka';
import { buildGroup, buildTrip, closeDb, commandsPublishedSettled, db, signToken, type Stack } from '../support/harness';
import { CATEGORY_BASE_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let auth: string;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'body-attacks' });
  auth = `Bearer ${await signToken()}`;
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

interface Answer {
  status: number;
  body: any;
  bytes: number;
  contentType: string | null;
}

async function send(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth, ...headers },
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, bytes: Buffer.byteLength(text), contentType: response.headers.get('content-type') };
}

function expectJsonError(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body?.code }).toEqual({ status, code });
  expect(answer.contentType).toMatch(/^application\/json/);
  // The error's own fields and nothing else: never any part of the body it refuses.
  expect(Object.keys(answer.body).filter((key) => !['code', 'message', 'detail', 'issues'].includes(key))).toEqual([]);
}

async function tripRows(imei: unknown) {
  return (await db().query('SELECT * FROM trip_locations WHERE imei = $1', [imei])).rows;
}

async function groupRows(name: unknown) {
  return (await db().query('SELECT * FROM vehicle_groups WHERE name = $1', [name])).rows;
}

/** Groups whose name ends like the built group's (its unique suffix), for names a test spoils. */
async function groupRowsEndingLike(group: Record<string, unknown>) {
  return (await db().query('SELECT * FROM vehicle_groups WHERE name LIKE $1', [`%${String(group.vehicleGroupName).slice(-8)}`])).rows;
}

async function tripRowsAt(gpsTime: unknown) {
  return (await db().query('SELECT * FROM trip_locations WHERE gps_time = $1', [gpsTime])).rows;
}

/**
 * Sends a request that must be refused, and checks that it left nothing behind: no command reached the
 * writers, and no row holds its data (`stored`, where the body carries something to look it up by).
 */
async function sendRefused(
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  stored?: () => Promise<unknown[]>,
): Promise<Answer> {
  const published = await commandsPublished(stack.prefix);
  const answer = await send(path, body, headers);
  expect(await commandsPublishedSettled(stack)).toBe(published);
  if (stored) expect(await stored()).toEqual([]);
  return answer;
}

describe('size', () => {
  const oversizedTrip = () => buildTrip({ padding: 'x'.repeat(2 * 1024 * 1024) });

  test.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('a %s body that inflates past the limit (a zip bomb) responds 413 JSON and stores nothing', async (encoding, compress) => {
    const trip = oversizedTrip();
    const bomb = compress(Buffer.from(JSON.stringify(trip)));
    expect(bomb.length).toBeLessThan(50_000);
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, bomb, { 'content-encoding': encoding }, () => tripRows(trip.imei)),
      413,
      'E-V1/1-05',
    );
  });

  test('a gzip body within the limit is read as the JSON it holds', async () => {
    const trip = buildTrip();
    const answer = await send(TRIP_LOCATION_PATH, gzipSync(Buffer.from(JSON.stringify(trip))), { 'content-encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(await tripRows(trip.imei)).toHaveLength(1);
  });

  test('an unknown content encoding responds 415 JSON and stores nothing', async () => {
    const trip = buildTrip();
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, JSON.stringify(trip), { 'content-encoding': 'compress' }, () => tripRows(trip.imei)),
      415,
      'E-V1/1-04',
    );
  });

  test('a gzip header on a body that is not gzip responds 400 JSON and stores nothing', async () => {
    const trip = buildTrip();
    const answer = await sendRefused(TRIP_LOCATION_PATH, JSON.stringify(trip), { 'content-encoding': 'gzip' }, () => tripRows(trip.imei));
    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^application\/json/);
  });

  test('a form body over the limit and a group body over the limit respond 413 JSON and store nothing', async () => {
    const trip = buildTrip();
    const form = new URLSearchParams({
      ...Object.fromEntries(Object.entries(trip).map(([key, value]) => [key, String(value)])),
      padding: 'x'.repeat(2 * 1024 * 1024),
    });
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, form.toString(), { 'content-type': 'application/x-www-form-urlencoded' }, () =>
        tripRows(trip.imei),
      ),
      413,
      'E-V1/1-05',
    );
    const group = buildGroup({ padding: 'x'.repeat(2 * 1024 * 1024) });
    expectJsonError(
      await sendRefused(VEHICLE_GROUP_PATH, JSON.stringify(group), {}, () => groupRows(group.vehicleGroupName)),
      413,
      'E-V1/1-05',
    );
  });

  test('a body streamed without a length past the limit responds 413 JSON and publishes nothing', async () => {
    const published = await commandsPublished(stack.prefix);
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 8) return controller.close();
        sent += 1;
        controller.enqueue(sent === 1 ? Buffer.from('{"imei":"') : chunk);
      },
    });
    const response = await fetch(`${stack.url}${TRIP_LOCATION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'E-V1/1-05' });
    expect(await commandsPublishedSettled(stack)).toBe(published);
  });

  test('more than 1000 form fields respond 413 JSON and store nothing', async () => {
    const trip = buildTrip();
    const fields = [
      ...Object.entries(trip).map(([key, value]) => `${key}=${encodeURIComponent(String(value))}`),
      ...Array.from({ length: 1001 }, (_, index) => `f${index}=1`),
    ];
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, fields.join('&'), { 'content-type': 'application/x-www-form-urlencoded' }, () =>
        tripRows(trip.imei),
      ),
      413,
      'E-V1/1-05',
    );
  });
});

describe('deeply nested JSON', () => {
  const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  const tripWithDeepLatitude = () => {
    const trip = buildTrip();
    return { body: JSON.stringify(trip).replace('"latitude":-6.2088', `"latitude":${nested(10_000)}`), stored: () => tripRows(trip.imei) };
  };
  const groupWithDeepIds = () => {
    const group = buildGroup({ vehicleIds: [] });
    return { body: JSON.stringify(group).replace('[]', nested(10_000)), stored: () => groupRows(group.vehicleGroupName) };
  };

  const tooDeep = {
    code: 'E-V1/1-02',
    message: 'The request body could not be parsed',
    detail: 'the body nests arrays and objects more than 32 deep',
  };
  const tripWithDeepAttributes = () => {
    const trip = buildTrip();
    const body = JSON.stringify({ ...trip, attributes: 0 }).replace('"attributes":0', `"attributes":${nestedObject(20_000)}`);
    return { body, stored: () => tripRows(trip.imei) };
  };

  test.each([
    ['the whole body, 10,000 arrays deep', TRIP_LOCATION_PATH, () => ({ body: nested(10_000), stored: undefined })],
    ['latitude, 10,000 arrays deep', TRIP_LOCATION_PATH, tripWithDeepLatitude],
    ['vehicleIds, 10,000 arrays deep', VEHICLE_GROUP_PATH, groupWithDeepIds],
    ['attributes, 20,000 objects deep', TRIP_LOCATION_PATH, tripWithDeepAttributes],
    ['the whole body, 400,000 arrays deep', TRIP_LOCATION_PATH, () => ({ body: nested(400_000), stored: undefined })],
  ])('%s responds 400 before it is parsed, stores nothing, and the gateway keeps serving', async (_label, path, request) => {
    const { body, stored } = request();
    const answer = await sendRefused(path, body, {}, stored);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(tooDeep);
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(buildTrip()))).status).toBe(200);
  });

  test('an unknown field is dropped whatever its shape within 32 levels; past them the body is refused', async () => {
    const kept = buildTrip();
    // Unknown fields are dropped whatever their shape, so the rest of the trip is valid.
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(kept).replace('{', `{"extra":${nestedObject(31)},`))).status).toBe(200);
    expect(await tripRows(kept.imei)).toHaveLength(1);
    const refused = buildTrip();
    const answer = await sendRefused(TRIP_LOCATION_PATH, JSON.stringify(refused).replace('{', `{"extra":${nestedObject(32)},`), {}, () =>
      tripRows(refused.imei),
    );
    expect(answer.body).toEqual(tooDeep);
  });
});

describe('attributes nested or grown past their bounds', () => {
  const deepText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const deepAttributes = (depth: number) => JSON.parse(deepText(depth)) as Record<string, unknown>;
  /** The trip's JSON with attributes 20 objects deep: within what a body may nest, past what attributes may. */
  const withDeepAttributes = (trip: Record<string, unknown>) =>
    JSON.stringify({ ...trip, attributes: 0 }).replace('"attributes":0', `"attributes":${deepText(20)}`);
  const BATCH_PATH = `${TRIP_LOCATION_PATH}/batch`;

  test.each([
    ['a trip, 20 objects deep', TRIP_LOCATION_PATH, (trip: Record<string, unknown>) => withDeepAttributes(trip), 'attributes'],
    ['a batch, 20 objects deep', BATCH_PATH, (trip: Record<string, unknown>) => `[${withDeepAttributes(trip)}]`, '0.attributes'],
  ])('in %s respond 400 naming attributes, store nothing, and the gateway keeps serving', async (_label, path, body, field) => {
    const trip = buildTrip();
    const answer = await sendRefused(path, body(trip), {}, () => tripRows(trip.imei));
    const issues = path === TRIP_LOCATION_PATH ? answer.body.issues : answer.body.data.items[0].error.issues;
    expect(answer.status).toBe(path === TRIP_LOCATION_PATH ? 400 : 200);
    expect(issues).toEqual([{ path: field.replace(/^0\./, ''), code: 'custom', message: 'Must nest at most 8 levels deep' }]);
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(buildTrip()))).status).toBe(200);
  });

  test('a command the bus cannot serialise, or that can never fit a message, is refused with nothing left waiting for a reply', async () => {
    const circular: Record<string, unknown> = { imei: '1' };
    circular.self = circular;
    const topic = `${stack.prefix}.trip-locations`;
    const { bus } = stack.gateway;
    await expect(bus.request({ topic, key: '1', value: circular })).rejects.toMatchObject({ code: 'E-S1/1-00' });
    await expect(bus.request({ topic, key: '1', value: { blob: 'x'.repeat(600 * 1024) } })).rejects.toMatchObject({
      code: 'E-V1/1-05',
    });
    await expect(bus.requestLists([{ topic, key: '1', values: [{ blob: 'x'.repeat(600 * 1024) }, {}] }])).rejects.toMatchObject({
      code: 'E-V1/1-05',
    });
    expect(bus.pendingCount()).toBe(0);
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(buildTrip()))).status).toBe(200);
  });

  test('NDJSON lines with nested, wide or heavy attributes are refused one by one; the valid line is stored', async () => {
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, Array.from({ length: 30 }, () => 0)]));
    const lines = [
      buildTrip({ attributes: deepAttributes(9) }),
      buildTrip({ attributes: wide }),
      buildTrip({ attributes: { blob: 'x'.repeat(17 * 1024) } }),
      buildTrip({ attributes: { nested: { ok: [1, 2, { three: 3 }] } } }),
    ];
    const answer = await send(BATCH_PATH, lines.map((line) => JSON.stringify(line)).join('\n'), { 'content-type': 'application/x-ndjson' });
    expect(answer.status).toBe(200);
    expect(answer.body.data.items.map((item: any) => item.error?.issues?.[0]?.message ?? 'stored')).toEqual([
      'Must nest at most 8 levels deep',
      'Must hold at most 1024 keys and list elements in all',
      'Must be at most 16 KiB as JSON',
      'stored',
    ]);
    expect((await tripRows(lines[3]!.imei)).map((row) => row.attributes)).toEqual([{ nested: { ok: [1, 2, { three: 3 }] } }]);
  });
});

describe('prototype pollution', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  test('__proto__ and constructor keys in a JSON trip are ignored and the row is stored as sent', async () => {
    const trip = buildTrip();
    const body = JSON.stringify(trip).replace(
      '{',
      '{"__proto__":{"polluted":"yes","latitude":1,"isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},',
    );
    const answer = await send(TRIP_LOCATION_PATH, body);
    expect(answer.status).toBe(200);
    const [row] = await tripRows(trip.imei);
    expect(row).toMatchObject({ latitude: trip.latitude, longitude: trip.longitude, speed: trip.speed, ignition: true });
    expect(row.polluted).toBeUndefined();
  });

  test('__proto__ and constructor keys in a form trip are ignored and the row is stored as sent', async () => {
    const trip = buildTrip();
    const form = new URLSearchParams(Object.entries(trip).map(([key, value]): [string, string] => [key, String(value)]));
    form.append('__proto__[polluted]', 'yes');
    form.append('__proto__', 'yes');
    form.append('constructor[prototype][polluted]', 'yes');
    const answer = await send(TRIP_LOCATION_PATH, form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(answer.status).toBe(200);
    expect(await tripRows(trip.imei)).toHaveLength(1);
  });

  test('__proto__ keys in a group body and in the query string pollute nothing, and the group is stored as sent', async () => {
    const group = buildGroup();
    const body = JSON.stringify(group).replace('{', '{"__proto__":{"polluted":"yes","vehicleIds":[666]},');
    const answer = await send(`${VEHICLE_GROUP_PATH}?__proto__[polluted]=yes&constructor[prototype][polluted]=yes`, body);
    expect(answer.status).toBe(200);
    const members = await db().query('SELECT vehicle_id FROM vehicle_group_members WHERE vehicle_group_id = $1 ORDER BY 1', [
      answer.body.data.id,
    ]);
    expect(members.rows.map((row) => Number(row.vehicle_id))).toEqual(group.vehicleIds);
  });

  test('a __proto__ field named in the validation error does not reach the answer as a prototype', async () => {
    const answer = await sendRefused(TRIP_LOCATION_PATH, '{"__proto__":{"imei":"x"},"latitude":"__proto__"}');
    expectJsonError(answer, 400, 'E-V1/1-01');
  });
});

describe('repeated and bracketed form keys', () => {
  const form = (extra: string) => {
    const { imei, gpsTime } = buildTrip();
    return `imei=${imei}&gpsTime=${encodeURIComponent(String(gpsTime))}&longitude=106.8&speed=10&ignition=true&${extra}`;
  };

  test.each([
    ['latitude given twice', 'latitude=1&latitude=2', 'latitude'],
    ['latitude as a bracket array', 'latitude[]=1', 'latitude'],
    ['latitude as an indexed array', 'latitude[0]=1&latitude[1]=2', 'latitude'],
    ['latitude as an object', 'latitude[value]=1', 'latitude'],
    ['ignition given twice', 'latitude=1&ignition=false', 'ignition'],
    ['latitude under __proto__', 'latitude[__proto__]=1', 'latitude'],
  ])('%s responds 400 naming %s, and stores nothing', async (_label, extra, field) => {
    const body = form(extra);
    const imei = new URLSearchParams(body).get('imei');
    const answer = await sendRefused(TRIP_LOCATION_PATH, body, { 'content-type': 'application/x-www-form-urlencoded' }, () =>
      tripRows(imei),
    );
    expectJsonError(answer, 400, 'E-V1/1-01');
    expect(answer.body.issues.map((issue: { path: string }) => issue.path)).toEqual([field]);
  });
});

describe('bytes that are not UTF-8', () => {
  const withBytes = (json: string, marker: string, bytes: number[]) => {
    const [before, after] = json.split(marker);
    return Buffer.concat([Buffer.from(before!), Buffer.from(bytes), Buffer.from(after!)]);
  };

  test.each([
    ['a lone continuation byte', [0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['0xFF', [0xff, 0xfe]],
  ])('%s in a group name responds 400 JSON and stores nothing', async (_label, bytes) => {
    const group = buildGroup();
    const answer = await sendRefused(
      VEHICLE_GROUP_PATH,
      withBytes(JSON.stringify(group), 'Cold chain', [...Buffer.from('Cold '), ...bytes]),
      {},
      () => groupRowsEndingLike(group),
    );
    expectJsonError(answer, 400, 'E-V1/1-02');
  });

  test('invalid bytes in a trip imei, JSON or form, respond 400 JSON and store nothing', async () => {
    // The imei is what the bytes spoil, so the rows are looked up by the position's unique time instead.
    const trip = buildTrip({ imei: 'MARK' });
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, withBytes(JSON.stringify(trip), 'MARK', [0xff, 0x41]), {}, () => tripRowsAt(trip.gpsTime)),
      400,
      'E-V1/1-02',
    );
    const { gpsTime } = buildTrip();
    const form = Buffer.concat([
      Buffer.from('imei='),
      Buffer.from([0xff]),
      Buffer.from(`&latitude=1&longitude=1&speed=1&ignition=1&gpsTime=${encodeURIComponent(String(gpsTime))}`),
    ]);
    const answer = await sendRefused(TRIP_LOCATION_PATH, form, { 'content-type': 'application/x-www-form-urlencoded' }, () =>
      tripRowsAt(gpsTime),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.code).toMatch(/^E-V1\/1-0[12]$/);
  });

  test('a lone surrogate escaped in JSON (\\ud800) is refused rather than stored as a replacement character', async () => {
    const group = buildGroup();
    const answer = await sendRefused(VEHICLE_GROUP_PATH, JSON.stringify(group).replace('Cold chain', 'Cold \\ud800 chain'), {}, () =>
      groupRowsEndingLike(group),
    );
    expectJsonError(answer, 400, 'E-V1/1-01');
  });

  test('valid multi-byte UTF-8 (accents, CJK, emoji) is stored exactly', async () => {
    const name = `Rantai dingin — 冷链 🚚 ${Date.now()}`;
    const answer = await send(VEHICLE_GROUP_PATH, JSON.stringify(buildGroup({ vehicleGroupName: name })));
    expect(answer.status).toBe(200);
    const stored = await db().query('SELECT name FROM vehicle_groups WHERE id = $1', [answer.body.data.id]);
    expect(stored.rows[0].name).toBe(name);
  });
});

describe('SQL in every field', () => {
  const injections = [
    "'; DROP TABLE trip_locations; --",
    "1' OR '1'='1",
    '1); DELETE FROM vehicle_groups; --',
    '$$; TRUNCATE api_keys; $$',
    '\\x27 OR 1=1',
  ];

  test('SQL in a group name is stored verbatim, and in an Idempotency-Key it is a key like any other', async () => {
    for (const injection of injections) {
      const name = `${injection} ${Date.now()}`;
      const body = JSON.stringify(buildGroup({ vehicleGroupName: name }));
      const key = { 'idempotency-key': `${injection}-${Date.now()}` };
      const answer = await send(VEHICLE_GROUP_PATH, body, key);
      expect(answer.status).toBe(200);
      const stored = await db().query('SELECT name FROM vehicle_groups WHERE id = $1', [answer.body.data.id]);
      expect(stored.rows[0].name).toBe(name);
      // The key is kept as a digest with its subject: it answers its group again, and nothing else.
      expect((await send(VEHICLE_GROUP_PATH, body, key)).body.data.id).toBe(answer.body.data.id);
    }
  });

  test('SQL in an imei without spaces is stored verbatim; with spaces it is refused', async () => {
    const imei = `'OR'1'='1'--${Date.now()}`.slice(0, 32);
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(buildTrip({ imei })))).status).toBe(200);
    expect((await tripRows(imei)).map((row) => row.imei)).toEqual([imei]);
    const refusedImei = "'; DROP TABLE x; --";
    expectJsonError(
      await sendRefused(TRIP_LOCATION_PATH, JSON.stringify(buildTrip({ imei: refusedImei })), {}, () => tripRows(refusedImei)),
      400,
      'E-V1/1-01',
    );
  });

  test.each(['gpsTime', 'latitude', 'longitude', 'speed', 'ignition', 'angle', 'satellite', 'door1', 'door2', 'temp', 'fuel_percentage'])(
    'SQL in %s responds 400 naming it, as JSON and as a form field',
    async (field) => {
      for (const injection of injections) {
        const trip = buildTrip({ [field]: injection });
        const json = await sendRefused(TRIP_LOCATION_PATH, JSON.stringify(trip), {}, () => tripRows(trip.imei));
        expectJsonError(json, 400, 'E-V1/1-01');
        expect(json.body.issues.map((issue: { path: string }) => issue.path)).toEqual([field]);
        const form = new URLSearchParams(Object.entries(trip).map(([key, value]): [string, string] => [key, String(value)])).toString();
        const answer = await sendRefused(TRIP_LOCATION_PATH, form, { 'content-type': 'application/x-www-form-urlencoded' }, () =>
          tripRows(trip.imei),
        );
        expectJsonError(answer, 400, 'E-V1/1-01');
        expect(answer.body.issues.map((issue: { path: string }) => issue.path)).toEqual([field]);
      }
    },
  );

  test('SQL in the category id responds 400, and every table is intact: the same tables, and the rows of this test unchanged', async () => {
    const trip = buildTrip();
    expect((await send(TRIP_LOCATION_PATH, JSON.stringify(trip))).status).toBe(200);
    const state = () =>
      databaseState(['trip_locations', 'vehicle_groups', 'vehicle_group_members', 'api_keys', 'product_categories'], {
        trip: { text: 'SELECT * FROM trip_locations WHERE imei = $1', values: [trip.imei] },
      });
    const before = await state();
    for (const injection of injections) {
      const response = await fetch(`${stack.url}${CATEGORY_BASE_PATH}/${encodeURIComponent(injection)}`, {
        headers: { authorization: 'test-api-key-0123456789abcdef' },
      });
      expect(response.status).toBe(400);
    }
    expect(await state()).toEqual(before);
    expect(await tripRows(trip.imei)).toHaveLength(1);
  });
});

describe('answers that could be made huge', () => {
  test('a body of 150,000 invalid vehicle ids gets a 400 of bounded size', async () => {
    const group = buildGroup({ vehicleIds: Array.from({ length: 150_000 }, () => 'x') });
    const answer = await sendRefused(VEHICLE_GROUP_PATH, JSON.stringify(group), {}, () => groupRows(group.vehicleGroupName));
    expectJsonError(answer, 400, 'E-V1/1-01');
    expect(answer.bytes).toBeLessThan(20_000);
  });

  test('a trip whose every field is wrong gets every field named once', async () => {
    const answer = await sendRefused(
      TRIP_LOCATION_PATH,
      JSON.stringify({ imei: 1, gpsTime: 'x', latitude: 'x', longitude: 'x', speed: 'x', ignition: 'x' }),
    );
    expectJsonError(answer, 400, 'E-V1/1-01');
    expect(answer.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'gpsTime',
      'ignition',
      'imei',
      'latitude',
      'longitude',
      'speed',
    ]);
  });
});

describe('requests Node’s HTTP parser refuses, and transfer codings', () => {
  const head = (extra: string) => `POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n${extra}`;

  test.each([
    ['both Content-Length and Transfer-Encoding', head('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}')],
    ['a repeated Content-Length', head('Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}')],
    ['a NUL in a header', head('X-Bad: a\u0000b\r\nContent-Length: 2\r\n\r\n{}')],
    ['a bare LF ending a header', head('X-Bad: a\nContent-Length: 2\r\n\r\n{}')],
  ])('%s is answered 400 with the JSON error body, and the connection closed', async (_label, request) => {
    const answer = await rawExchange(stack.gateway.port, request);
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(answer.body)).toEqual({ code: 'E-V1/1-10', message: 'The request is not valid HTTP' });
  });

  test('a request head over 32 KiB is answered 431 with the JSON error body', async () => {
    const answer = await rawExchange(stack.gateway.port, head(`X-Big: ${'a'.repeat(33 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`));
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(answer.body)).toEqual({ code: 'E-V1/1-11', message: 'The request headers are too large' });
  });

  test.each(['gzip, chunked', 'identity', 'deflate'])(
    'Transfer-Encoding "%s" with a plain body is refused 501 with a JSON body, and nothing is stored',
    async (coding) => {
      const trip = buildTrip();
      const body = JSON.stringify(trip);
      const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const answer = await rawExchange(
        stack.gateway.port,
        head(`Authorization: ${auth}\r\nTransfer-Encoding: ${coding}\r\nConnection: close\r\n\r\n${chunked}`),
      );
      expect(answer.statusLine).toBe('HTTP/1.1 501 Not Implemented');
      expect(JSON.parse(answer.body)).toEqual({
        code: 'E-V1/1-09',
        message: 'Unsupported transfer coding',
        detail: 'the only transfer coding accepted is chunked alone',
      });
      expect(await tripRows(trip.imei)).toEqual([]);
    },
  );

  test('Transfer-Encoding "chunked" alone is read and stored as before', async () => {
    const trip = buildTrip();
    const body = JSON.stringify(trip);
    const answer = await rawExchange(
      stack.gateway.port,
      head(
        `Authorization: ${auth}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      ),
    );
    expect(answer.statusLine).toBe('HTTP/1.1 200 OK');
    expect(await tripRows(trip.imei)).toHaveLength(1);
  });
});

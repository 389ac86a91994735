// The OpenAPI document: valid OpenAPI 3.1, listing exactly the routes the gateway serves, and
// describing the bodies a running stack really sends (checked with ajv against the document itself).
import { randomUUID } from 'node:crypto';
import { validate, compileErrors } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { listRoutes } from '../support/express-routes';
import { buildCategory, insertCategory } from '../categories/category-support';
import { buildGroup, buildTrip, closeDb, postForm, postJson, signToken, TEST_API_KEY, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import {
  CATEGORY_BASE_PATH,
  DEVICES_PATH,
  TRIP_LOCATION_BATCH_PATH,
  TRIP_LOCATION_PATH,
  VEHICLE_GROUP_PATH,
} from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const TRIP_BATCH = TRIP_LOCATION_BATCH_PATH;
const GROUP = VEHICLE_GROUP_PATH;
const CATEGORY = `${CATEGORY_BASE_PATH}/{id}`;
const LAST_LOCATION = `${DEVICES_PATH}/{imei}/last-location`;
const TRIP_LOCATIONS = `${DEVICES_PATH}/{imei}/trip-locations`;

let stack: Stack;
let document: any;
let ajv: Ajv2020;
let token: string;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'openapi' });
  const response = await fetch(`${stack.url}/openapi.json`);
  expect(response.status).toBe(200);
  document = await response.json();
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi.json');
  token = await signToken();
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

function pointer(...segments: string[]): string {
  return `openapi.json#/${segments.map((segment) => segment.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

function schemaErrors(ref: string, body: unknown): string {
  const validateBody = ajv.getSchema(ref);
  if (!validateBody) throw new Error(`the document has no schema at ${ref}`);
  return validateBody(body) ? '' : ajv.errorsText(validateBody.errors);
}

/** Checks a real response against what the document says this operation answers with this status. */
function expectDocumented(path: string, method: string, response: { status: number; body: unknown }): void {
  const documented = document.paths[path]?.[method]?.responses?.[String(response.status)];
  expect({ path, method, status: response.status, documented: Boolean(documented) }).toEqual({
    path,
    method,
    status: response.status,
    documented: true,
  });
  const ref = pointer('paths', path, method, 'responses', String(response.status), 'content', 'application/json', 'schema');
  expect(schemaErrors(ref, response.body)).toBe('');
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

describe('the document', () => {
  test('is valid OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    expect(result.valid ? '' : compileErrors(result)).toBe('');
  });

  test('lists every route the express app serves, and no other', () => {
    const served = listRoutes(stack.gateway.app).map(({ method, path }) => `${method} ${path.replace(/:(\w+)/g, '{$1}')}`);
    const documented = Object.entries(document.paths as Record<string, object>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(served).toContain(`get ${CATEGORY}`);
    expect([...new Set(documented)].sort()).toEqual([...new Set(served)].sort());
  });

  test('every documented path answers a method it does not take with a JSON 405 whose Allow names the documented methods', async () => {
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>)) {
      const methods = Object.keys(operations).map((method) => method.toUpperCase());
      const url = stack.url + path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === 'id' ? randomUUID() : 'x1'));
      // Past a guarded prefix's access check, which comes first.
      const authorization = path === CATEGORY ? TEST_API_KEY : `Bearer ${token}`;
      const untaken = ['DELETE', 'PUT', 'PATCH'].find((method) => !methods.includes(method))!;
      const response = await fetch(url, { method: untaken, headers: { authorization } });
      const body = (await response.json()) as { code?: string };
      const allow = methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ');
      expect({ path, status: response.status, code: body.code, allow: response.headers.get('allow') }).toEqual({
        path,
        status: 405,
        code: 'E-N1/1-03',
        allow,
      });
    }
  });

  test("documents the Idempotency-Key header a group create's 503 carries to retry with", () => {
    const unconfirmed = document.paths[GROUP].post.responses['503'];
    expect(unconfirmed.headers['Idempotency-Key']).toEqual({ $ref: '#/components/headers/Idempotency-Key' });
    expect(unconfirmed.headers['Retry-After']).toBeDefined();
    expect(document.components.headers['Idempotency-Key'].schema).toEqual({ type: 'string', minLength: 1, maxLength: 200 });
    expect(document.paths[TRIP].post.responses['503'].headers['Idempotency-Key']).toBeUndefined();
  });

  test('describes the wire form of a trip location: a form sends every field as a string', () => {
    const ref = pointer('components', 'schemas', 'TripLocationRequest');
    const trip = buildTrip();
    const asForm = Object.fromEntries(Object.entries(trip).map(([name, value]) => [name, String(value)]));
    expect(schemaErrors(ref, trip)).toBe('');
    expect(schemaErrors(ref, asForm)).toBe('');
    expect(schemaErrors(ref, { ...asForm, ignition: 'TRUE', gpsTime: '1795300000' })).toBe('');
    expect(schemaErrors(ref, { ...trip, latitude: 'north' })).not.toBe('');
    expect(schemaErrors(ref, { ...trip, latitude: 91 })).not.toBe('');
  });
});

describe('real responses match the documented schemas', () => {
  test('trip location: 200 for JSON and for a form, 400 for a bad field and for a malformed token, 401 without a token', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const json = await postJson(`${stack.url}${TRIP}`, buildTrip(), auth);
    expect(json.status).toBe(200);
    expectDocumented(TRIP, 'post', json);

    const fields = Object.fromEntries(Object.entries(buildTrip()).map(([name, value]) => [name, String(value)]));
    const form = await postForm(`${stack.url}${TRIP}`, fields, auth);
    expect(form.status).toBe(200);
    expectDocumented(TRIP, 'post', form);

    const invalid = await postJson(`${stack.url}${TRIP}`, buildTrip({ latitude: 91 }), auth);
    expect(invalid.status).toBe(400);
    expect(invalid.body.issues).toBeDefined();
    expectDocumented(TRIP, 'post', invalid);

    const malformedToken = await postJson(`${stack.url}${TRIP}`, buildTrip(), { authorization: 'Bearer not-a-jwt' });
    expect(malformedToken.status).toBe(400);
    expectDocumented(TRIP, 'post', malformedToken);

    const anonymous = await postJson(`${stack.url}${TRIP}`, buildTrip());
    expect(anonymous.status).toBe(401);
    expectDocumented(TRIP, 'post', anonymous);
  });

  test('trip location batch: 200 with stored and refused items, 400 for an empty batch, 401, 415, 413', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const mixed = await postJson(`${stack.url}${TRIP_BATCH}`, [buildTrip(), buildTrip({ latitude: 91 }), 'position'], auth);
    expect(mixed.status).toBe(200);
    expect(mixed.body.data.rejected).toBe(2);
    expectDocumented(TRIP_BATCH, 'post', mixed);

    const empty = await postJson(`${stack.url}${TRIP_BATCH}`, [], auth);
    expect(empty.status).toBe(400);
    expectDocumented(TRIP_BATCH, 'post', empty);

    const anonymous = await postJson(`${stack.url}${TRIP_BATCH}`, [buildTrip()]);
    expect(anonymous.status).toBe(401);
    expectDocumented(TRIP_BATCH, 'post', anonymous);

    const wrongType = await postJson(`${stack.url}${TRIP_BATCH}`, JSON.stringify([buildTrip()]), { ...auth, 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expectDocumented(TRIP_BATCH, 'post', wrongType);

    const oversized = await postJson(`${stack.url}${TRIP_BATCH}`, [buildTrip({ padding: 'x'.repeat(2 * 1024 * 1024) })], auth);
    expect(oversized.status).toBe(413);
    expectDocumented(TRIP_BATCH, 'post', oversized);
  });

  test('the batch examples are what the route accepts and answers', () => {
    const operation = document.paths[TRIP_BATCH].post;
    const example = operation.requestBody.content['application/json'].example;
    expect(schemaErrors(pointer('paths', TRIP_BATCH, 'post', 'requestBody', 'content', 'application/json', 'schema'), example)).toBe('');
    const answers = Object.values(operation.responses['200'].content['application/json'].examples).map((named: any) => named.value);
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      expect(schemaErrors(pointer('paths', TRIP_BATCH, 'post', 'responses', '200', 'content', 'application/json', 'schema'), answer)).toBe(
        '',
      );
      expect(answer.data.items).toHaveLength(example.length);
    }
  });

  test('vehicle group: 200, 415 for text/plain, 413 for an oversized body', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const created = await postJson(`${stack.url}${GROUP}`, buildGroup(), { ...auth, 'idempotency-key': randomUUID() });
    expect(created.status).toBe(200);
    expectDocumented(GROUP, 'post', created);

    const wrongType = await postJson(`${stack.url}${GROUP}`, JSON.stringify(buildGroup()), { ...auth, 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expectDocumented(GROUP, 'post', wrongType);

    const oversized = await postJson(`${stack.url}${GROUP}`, buildGroup({ vehicleGroupName: 'x'.repeat(2 * 1024 * 1024) }), auth);
    expect(oversized.status).toBe(413);
    expectDocumented(GROUP, 'post', oversized);
  });

  test('product category: 200, 400 for an id that is not a UUID, 401 without a key, 404 for an unknown id', async () => {
    const category = await insertCategory(buildCategory({ min_temperature: null }));
    const key = { authorization: TEST_API_KEY };
    const base = `${stack.url}${CATEGORY_BASE_PATH}`;

    const found = await getJson(`${base}/${category.id}`, key);
    expect(found.status).toBe(200);
    expectDocumented(CATEGORY, 'get', found);

    const badId = await getJson(`${base}/not-a-uuid`, key);
    expect(badId.status).toBe(400);
    expectDocumented(CATEGORY, 'get', badId);

    const noKey = await getJson(`${base}/${category.id}`);
    expect(noKey.status).toBe(401);
    expectDocumented(CATEGORY, 'get', noKey);

    const unknown = await getJson(`${base}/${randomUUID()}`, key);
    expect(unknown.status).toBe(404);
    expectDocumented(CATEGORY, 'get', unknown);
  });

  test('position reads: 200 for the last location and a page, 400 for a bad parameter, 401 without a token, 404 without a position', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const trip = buildTrip({ angle: undefined, temp: undefined });
    expect((await postJson(`${stack.url}${TRIP}`, trip, auth)).status).toBe(200);
    const device = `${stack.url}${DEVICES_PATH}/${trip.imei as string}`;
    const at = Date.parse(trip.gpsTime as string);
    const range = `from=${new Date(at).toISOString()}&to=${new Date(at + 1).toISOString()}`;

    const last = await getJson(`${device}/last-location`, auth);
    expect(last.status).toBe(200);
    expectDocumented(LAST_LOCATION, 'get', last);

    const page = await getJson(`${device}/trip-locations?${range}`, auth);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expectDocumented(TRIP_LOCATIONS, 'get', page);

    const badLimit = await getJson(`${device}/trip-locations?limit=0`, auth);
    expect(badLimit.status).toBe(400);
    expectDocumented(TRIP_LOCATIONS, 'get', badLimit);

    const anonymous = await getJson(`${device}/trip-locations`);
    expect(anonymous.status).toBe(401);
    expectDocumented(TRIP_LOCATIONS, 'get', anonymous);

    const unknown = await getJson(`${stack.url}${DEVICES_PATH}/no-such-device/last-location`, auth);
    expect(unknown.status).toBe(404);
    expectDocumented(LAST_LOCATION, 'get', unknown);
  });

  test('the position examples are what the routes answer', () => {
    for (const path of [LAST_LOCATION, TRIP_LOCATIONS]) {
      const example = document.paths[path].get.responses['200'].content['application/json'].example;
      expect(schemaErrors(pointer('paths', path, 'get', 'responses', '200', 'content', 'application/json', 'schema'), example)).toBe('');
    }
  });

  test('an unknown route answers the documented Error body', async () => {
    const missing = await getJson(`${stack.url}/no/such/route`);
    expect(missing.status).toBe(404);
    expect(schemaErrors(pointer('components', 'schemas', 'Error'), missing.body)).toBe('');
  });

  test('probes: /healthz and /readyz', async () => {
    expectDocumented('/healthz', 'get', await getJson(`${stack.url}/healthz`));
    const ready = await getJson(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expectDocumented('/readyz', 'get', ready);
  });
});

describe('the docs page', () => {
  test('GET /docs serves Swagger UI from the gateway itself, pointed at /openapi.json', async () => {
    const page = await fetch(`${stack.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);

    const scripts = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/init.js', '/docs/swagger-ui.css']));
    for (const asset of scripts) {
      const response = await fetch(`${stack.url}${asset}`);
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      await response.arrayBuffer();
    }
    expect(await (await fetch(`${stack.url}/docs/init.js`)).text()).toContain("url: '/openapi.json'");
  });

  test('an asset that is not part of the page is a JSON 404', async () => {
    const response = await getJson(`${stack.url}/docs/package.json`);
    expect(response.status).toBe(404);
    expectDocumented('/docs/{asset}', 'get', response);
  });
});

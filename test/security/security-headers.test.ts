// The security headers every answer carries (helmet's): nosniff, a Content-Security-Policy, and a ban
// on being framed by another site; and the /docs page, which must keep working under that policy.
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { buildCategory, insertCategory } from '../categories/category-support';
import { EventStream } from '../support/event-stream';
import { buildGroup, buildTrip, closeDb, postJson, signToken, TEST_API_KEY, uniqueImei, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import {
  CATEGORY_BASE_PATH,
  DEVICES_PATH,
  FLEET_PATH,
  TRIP_LOCATION_PATH,
  VEHICLE_GROUP_PATH,
} from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const GROUP = VEHICLE_GROUP_PATH;
const CATEGORY = CATEGORY_BASE_PATH;
const DEVICES = DEVICES_PATH;
const STREAM = `${FLEET_PATH}/positions/stream`;

let stack: Stack;
/** A gateway of tight limits, for the answers only a limit gives: a device's 429, a stream's 503. */
let tight: Gateway;
let auth: Record<string, string>;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'security-headers' });
  tight = await startGateway(
    gatewayConfig({ ...stack.env, RATE_LIMIT_DEVICE_BURST: '1', RATE_LIMIT_DEVICE_PER_MINUTE: '1', MAX_STREAMS: '1' }),
  );
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await tight?.stop();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

/** The policy's directives, by name. */
function directives(policy: string | null): Map<string, string[]> {
  return new Map(
    (policy ?? '')
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
  );
}

function securityHeaders(headers: Headers) {
  return {
    nosniff: headers.get('x-content-type-options'),
    frameOptions: headers.get('x-frame-options'),
    frameAncestors: directives(headers.get('content-security-policy')).get('frame-ancestors'),
  };
}

/** An answer read to its end, so that its connection is free again when the test ends. */
async function read(response: Promise<Response>): Promise<Response> {
  const answer = await response;
  await answer.arrayBuffer();
  return answer;
}

const expected = { nosniff: 'nosniff', frameOptions: 'SAMEORIGIN', frameAncestors: ["'self'"] };

test('every JSON answer carries nosniff, X-Frame-Options and a policy with frame-ancestors, whatever its status', async () => {
  const category = await insertCategory(buildCategory());
  const device = uniqueImei();
  expect((await postJson(`${stack.url}${TRIP}`, buildTrip({ imei: device }), auth)).status).toBe(200);
  // The tight gateway's one stream is held, and its one device post spent, before the answers are asked.
  const held = await EventStream.open(`${tight.url}${STREAM}?imei=${uniqueImei()}`, auth);
  expect(held.status).toBe(200);
  const limited = uniqueImei();
  expect((await postJson(`${tight.url}${TRIP}`, buildTrip({ imei: limited }), auth)).status).toBe(200);
  const answers: Array<[string, Promise<{ status: number; headers: Headers }>]> = [
    ['trip 200', postJson(`${stack.url}${TRIP}`, buildTrip(), auth)],
    ['trip 400', postJson(`${stack.url}${TRIP}`, buildTrip({ latitude: 91 }), auth)],
    ['trip 401', postJson(`${stack.url}${TRIP}`, buildTrip())],
    ['group 200', postJson(`${stack.url}${GROUP}`, buildGroup(), auth)],
    ['group 405', read(fetch(`${stack.url}${GROUP}`, { method: 'OPTIONS' }))],
    ['category 200', read(fetch(`${stack.url}${CATEGORY}/${category.id}`, { headers: { authorization: TEST_API_KEY } }))],
    ['category 401', read(fetch(`${stack.url}${CATEGORY}/${category.id}`))],
    ['unknown route 404', read(fetch(`${stack.url}/nowhere`))],
    ['trip 413', postJson(`${stack.url}${TRIP}`, buildTrip({ padding: 'x'.repeat(2 * 1024 * 1024) }), auth)],
    [
      'trip 415',
      read(fetch(`${stack.url}${TRIP}`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'imei=1' })),
    ],
    ['trip 429', postJson(`${tight.url}${TRIP}`, buildTrip({ imei: limited }), auth)],
    ['stream 503', read(fetch(`${tight.url}${STREAM}?imei=${uniqueImei()}`, { headers: auth }))],
    ['stream 401', read(fetch(`${stack.url}${STREAM}?imei=${device}`))],
    ['last-location 200', read(fetch(`${stack.url}${DEVICES}/${device}/last-location`, { headers: auth }))],
    ['last-location 404', read(fetch(`${stack.url}${DEVICES}/${uniqueImei()}/last-location`, { headers: auth }))],
    ['history 200', read(fetch(`${stack.url}${DEVICES}/${device}/trip-locations`, { headers: auth }))],
    ['device status 200', read(fetch(`${stack.url}${DEVICES}/${device}`, { headers: auth }))],
    ['vehicle groups 200', read(fetch(`${stack.url}${FLEET_PATH}/vehicle-groups`, { headers: auth }))],
    ['healthz', read(fetch(`${stack.url}/healthz`))],
    ['openapi.json', read(fetch(`${stack.url}/openapi.json`))],
  ];
  for (const [label, answer] of answers) {
    const { status, headers } = await answer;
    expect({ label, status, json: headers.get('content-type')?.startsWith('application/json'), ...securityHeaders(headers) }).toEqual({
      label,
      status: Number(label.split(' ').pop()) || 200,
      json: true,
      ...expected,
    });
  }
  held.close();
});

test('/docs is served under a policy that allows only its own scripts and styles, and the page needs nothing else', async () => {
  const page = await fetch(`${stack.url}/docs`);
  expect(page.status).toBe(200);
  expect(securityHeaders(page.headers)).toEqual(expected);
  const policy = directives(page.headers.get('content-security-policy'));
  const scriptSources = policy.get('script-src') ?? policy.get('default-src');
  expect(scriptSources).toEqual(["'self'"]);
  expect(policy.get('default-src')).toEqual(["'self'"]);
  // Swagger UI draws its icons from data: URIs.
  expect(policy.get('img-src')).toEqual(expect.arrayContaining(["'self'", 'data:']));
  // The gateway is reached over plain HTTP too; an upgrade would leave the page without its scripts.
  expect(policy.has('upgrade-insecure-requests')).toBe(false);

  const html = await page.text();
  // No inline script or style for the policy to refuse: every script has a src, no element a style.
  expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
  expect(html).not.toMatch(/<style|\sstyle=/);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
  expect(assets.length).toBeGreaterThan(0);
  for (const asset of assets) {
    // Same origin, which 'self' allows.
    expect(asset).toMatch(/^\/(?!\/)/);
    const response = await fetch(`${stack.url}${asset}`);
    await response.arrayBuffer();
    // Under nosniff a browser runs a script or applies a stylesheet only when its type says so.
    const type = response.headers.get('content-type') ?? '';
    const wanted = asset.endsWith('.js') ? /^(text|application)\/javascript/ : asset.endsWith('.css') ? /^text\/css/ : /^image\//;
    expect({ asset, status: response.status, type: wanted.test(type), nosniff: response.headers.get('x-content-type-options') }).toEqual({
      asset,
      status: 200,
      type: true,
      nosniff: 'nosniff',
    });
  }
});

// Hostile bearer tokens on the write routes: unsigned tokens in every spelling, algorithm confusion
// against an RS256 gateway, key ids carrying paths and SQL, critical headers, malformed claims and
// oversized tokens. Each is refused with a 4xx JSON answer (never a 500), and nothing is published.
// (The basic cases, alg none, HS512, missing exp, exp in milliseconds and a future nbf, are in
// test/write-path/trip-location.test.ts.)
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { databaseState } from '../support/database-state';
import { closeKafka, commandsPublished } from '../support/kafka';
import { buildTrip, closeDb, commandsPublishedSettled, db, TEST_JWT_SECRET, type Stack } from '../support/harness';
import { rawRequest } from './raw-http';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let rsaGateway: Gateway;
let publicKeyPem: string;
let privateKey: KeyObject;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'token-attacks' });
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  privateKey = pair.privateKey;
  publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  // A second gateway on the same topics, configured for RS256 with a public key.
  rsaGateway = await startGateway(gatewayConfig({ ...stack.env, JWT_SECRET: '', JWT_PUBLIC_KEY: publicKeyPem }));
});
afterAll(async () => {
  await rsaGateway?.stop();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A compact JWS signed with HMAC-SHA-256 over exactly the header and payload given. */
function hs256(header: unknown, payload: unknown, secret: string | Buffer): string {
  const signingInput = `${encode(header)}.${encode(payload)}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

async function post(url: string, token: string) {
  const trip = buildTrip();
  const response = await fetch(`${url}${TRIP_LOCATION_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(trip),
  });
  const text = await response.text();
  return { status: response.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined, trip };
}

/** Counts the commands published once whatever the gateway at `url` took before has been published. */
async function publishedSettled(url: string): Promise<number> {
  if (url !== rsaGateway.url) return commandsPublishedSettled(stack);
  const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('1h').sign(privateKey);
  return commandsPublishedSettled(stack, { url, authorization: `Bearer ${token}` });
}

async function expectRefused(url: string, token: string, detail: string | RegExp) {
  const published = await commandsPublished(stack.prefix);
  const res = await post(url, token);
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'E-V1/1-03' });
  expect(res.body.detail).toMatch(typeof detail === 'string' ? new RegExp(`^Context creation failed: ${detail}$`) : detail);
  expect(await publishedSettled(url)).toBe(published);
  const stored = await db().query('SELECT 1 FROM trip_locations WHERE imei = $1', [res.trip.imei]);
  expect(stored.rowCount).toBe(0);
}

describe('unsigned tokens', () => {
  test.each([
    ['alg "NONE"', { alg: 'NONE' }, '', 'jwt algorithm not allowed'],
    ['alg "nOnE"', { alg: 'nOnE' }, '', 'jwt algorithm not allowed'],
    ['alg "none" with a signature', { alg: 'none' }, 'c2lnbmF0dXJl', 'jwt algorithm not allowed'],
    ['no alg at all', { typ: 'JWT' }, '', 'jwt malformed'],
    ['alg null', { alg: null }, '', 'jwt malformed'],
  ])('%s responds 400', async (_label, header, signature, detail) => {
    await expectRefused(stack.url, `${encode(header)}.${encode({ exp: inAnHour() })}.${signature}`, detail);
  });

  test('a valid signature with the signature part removed responds 400', async () => {
    const token = hs256({ alg: 'HS256' }, { exp: inAnHour() }, TEST_JWT_SECRET);
    await expectRefused(stack.url, `${token.slice(0, token.lastIndexOf('.'))}.`, 'invalid signature');
  });
});

describe('algorithm confusion against an RS256 gateway', () => {
  test('a token signed RS256 with the private key is accepted (the control case)', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('1h').sign(privateKey);
    expect((await post(rsaGateway.url, token)).status).toBe(200);
  });

  test.each([
    ['the PEM text', () => publicKeyPem],
    ['the PEM text without its final newline', () => publicKeyPem.trimEnd()],
    ['the DER bytes of the public key', () => Buffer.from(publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64')],
  ])('an HS256 token using %s as the HMAC secret responds 400 "jwt algorithm not allowed"', async (_label, secret) => {
    await expectRefused(rsaGateway.url, hs256({ alg: 'HS256', typ: 'JWT' }, { exp: inAnHour() }, secret()), 'jwt algorithm not allowed');
  });

  test('an HS256 token signed with the gateway-shared secret of another setup responds 400', async () => {
    await expectRefused(rsaGateway.url, hs256({ alg: 'HS256' }, { exp: inAnHour() }, TEST_JWT_SECRET), 'jwt algorithm not allowed');
  });
});

describe('key ids', () => {
  test.each([
    ['a path to an empty file', '../../../../../../dev/null', ''],
    ['a path to a known file', '/etc/hostname', 'localhost'],
    ['SQL that would select a known secret', "' UNION SELECT 'attacker-secret' --", 'attacker-secret'],
    ['SQL that drops a table', "x'; DROP TABLE trip_locations; --", 'x'],
    ['a URL', 'http://127.0.0.1:1/jwks.json', 'x'],
  ])('a kid carrying %s, signed with the key it points at, responds 400 "invalid signature"', async (_label, kid, guessedKey) => {
    await expectRefused(stack.url, hs256({ alg: 'HS256', kid }, { exp: inAnHour() }, guessedKey), 'invalid signature');
  });

  test('the same kids on a correctly signed token do not matter: it is accepted, and the tables are intact', async () => {
    const state = () => databaseState(['trip_locations', 'vehicle_groups', 'api_keys'], {});
    const before = await state();
    for (const kid of ['../../../../../../dev/null', "x'; DROP TABLE trip_locations; --", '\u0000', 'k'.repeat(2000)]) {
      expect((await post(stack.url, hs256({ alg: 'HS256', kid }, { exp: inAnHour() }, TEST_JWT_SECRET))).status).toBe(200);
    }
    expect(await state()).toEqual(before);
    expect((before.tables as unknown[]).length).toBe(3);
  });
});

describe('critical headers', () => {
  test.each([
    ['an unknown extension', { alg: 'HS256', crit: ['x-fleet-policy'], 'x-fleet-policy': 'allow-all' }, 'jwt uses an unsupported header'],
    ['an extension listed but absent', { alg: 'HS256', crit: ['x-fleet-policy'] }, 'jwt uses an unsupported header'],
    ['a registered claim name', { alg: 'HS256', crit: ['exp'], exp: 1 }, 'jwt uses an unsupported header'],
    ['an empty list', { alg: 'HS256', crit: [] }, 'jwt malformed'],
    ['a string instead of a list', { alg: 'HS256', crit: 'b64' }, 'jwt malformed'],
    ['an unencoded payload (b64: false)', { alg: 'HS256', b64: false, crit: ['b64'] }, 'jwt malformed'],
  ])('crit with %s responds 400', async (_label, header, detail) => {
    await expectRefused(stack.url, hs256(header, { exp: inAnHour() }, TEST_JWT_SECRET), detail);
  });
});

describe('claims', () => {
  test.each([
    ['exp as a string', { exp: String(inAnHour()) }, 'jwt must have a numeric exp claim'],
    ['exp as a huge number', { exp: 1e300 }, 'jwt exp is not in seconds'],
    ['exp negative', { exp: -1 }, 'jwt expired'],
    ['exp null', { exp: null }, 'jwt must have a numeric exp claim'],
    ['nbf as a string', { exp: inAnHour(), nbf: 'now' }, 'jwt not active'],
    ['a payload that is not an object', [1, 2, 3], 'jwt malformed'],
    ['a payload that is not JSON', 'not json', 'jwt malformed'],
  ])('%s responds 400', async (_label, payload, detail) => {
    await expectRefused(stack.url, hs256({ alg: 'HS256' }, payload, TEST_JWT_SECRET), detail);
  });

  test('a header that is not an object responds 400', async () => {
    await expectRefused(stack.url, hs256('"HS256"', { exp: inAnHour() }, TEST_JWT_SECRET), 'jwt malformed');
  });

  test('__proto__ in the header and the payload of a valid token pollutes nothing', async () => {
    const token = hs256(
      JSON.parse('{"alg":"HS256","__proto__":{"alg":"none","polluted":"header"}}'),
      JSON.parse(`{"exp":${inAnHour()},"__proto__":{"polluted":"payload","exp":1}}`),
      TEST_JWT_SECRET,
    );
    expect((await post(stack.url, token)).status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('oversized and malformed tokens', () => {
  test('a 40 KB token responds 431 (the request head is over 32 KiB), not 500, and publishes nothing', async () => {
    const published = await commandsPublished(stack.prefix);
    const res = await post(stack.url, hs256({ alg: 'HS256' }, { exp: inAnHour(), pad: 'x'.repeat(30_000) }, TEST_JWT_SECRET));
    expect(res.status).toBe(431);
    expect(await publishedSettled(stack.url)).toBe(published);
  });

  test('a 12 KB token signed with the wrong key responds 400 JSON', async () => {
    await expectRefused(stack.url, hs256({ alg: 'HS256' }, { exp: inAnHour(), pad: 'x'.repeat(9000) }, 'wrong'), 'invalid signature');
  });

  test.each([
    ['thousands of segments', 'a.'.repeat(3000)],
    ['characters outside base64url', 'eyJ!.eyJ$.abc'],
    ['four parts', 'eyJhbGciOiJIUzI1NiJ9.e30.sig.extra'],
    ['a JWE (five parts)', 'a.b.c.d.e'],
  ])('a token with %s responds 400 "jwt malformed" and publishes nothing', async (_label, token) => {
    const published = await commandsPublished(stack.prefix);
    const res = await fetch(`${stack.url}${TRIP_LOCATION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(buildTrip()),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'E-V1/1-03', detail: 'Context creation failed: jwt malformed' });
    expect(await publishedSettled(stack.url)).toBe(published);
  });

  test('a token with a control character is refused by the HTTP parser with 400, and the gateway keeps serving', async () => {
    // fetch refuses to send such a header, so the request is written on a socket by hand.
    const published = await commandsPublished(stack.prefix);
    const head = await rawRequest(
      new URL(stack.url).port,
      `POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.\u0001x\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(await publishedSettled(stack.url)).toBe(published);
    await expectRefused(stack.url, hs256({ alg: 'HS256' }, { exp: inAnHour() }, 'wrong'), 'invalid signature');
  });
});

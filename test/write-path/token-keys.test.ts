// Every way the gateway can be given its token key: a JWKS endpoint, an ES256 public key, and the
// issuer and audience checks. A token the gateway accepts lets the request reach validation, so an
// empty body answers the validation 400 (E-V1/1-01) instead of the token 400 (E-V1/1-03).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { baseEnv, postJson, signToken, provisionedPrefix } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';

const TRIP = TRIP_LOCATION_PATH;

afterAll(() => closeKafka());

async function attempt(gateway: Gateway, token: string) {
  return postJson(`${gateway.url}${TRIP}`, {}, { authorization: `Bearer ${token}` });
}

function expectAccepted(res: { status: number; body: { code: string } }) {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('E-V1/1-01');
}

function expectRefused(res: { status: number; body: unknown }, cause: string) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    code: 'E-V1/1-03',
    message: 'An error occurred while executing the query',
    detail: `Context creation failed: ${cause}`,
  });
}

function sign(key: CryptoKey, alg: string, claims: Record<string, unknown> = {}, kid?: string) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg, ...(kid ? { kid } : {}) })
    .setExpirationTime('10m')
    .sign(key);
}

describe('a gateway verifying with a JWKS endpoint', () => {
  let gateway: Gateway;
  let jwks: http.Server;
  let signingKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'fleet-1', alg: 'RS256', use: 'sig' };
    jwks = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [publicJwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const { port } = jwks.address() as AddressInfo;
    gateway = await startGateway(
      gatewayConfig(
        baseEnv(await provisionedPrefix('jwks'), { JWT_SECRET: '', JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json` }),
      ),
    );
  });
  afterAll(async () => {
    await gateway?.stop();
    jwks?.close();
  });

  test('accepts a token signed by a key the endpoint publishes', async () => {
    expectAccepted(await attempt(gateway, await sign(signingKey, 'RS256', {}, 'fleet-1')));
  });

  test('refuses a token whose kid the endpoint does not publish', async () => {
    expectRefused(await attempt(gateway, await sign(signingKey, 'RS256', {}, 'unknown-kid')), 'no key matches the jwt');
  });

  test('refuses an HS256 token, whatever its secret', async () => {
    expectRefused(await attempt(gateway, await signToken()), 'jwt algorithm not allowed');
  });
});

describe('a gateway verifying with an ES256 public key, an issuer and an audience', () => {
  let gateway: Gateway;
  let signingKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    signingKey = pair.privateKey;
    gateway = await startGateway(
      gatewayConfig(
        baseEnv(await provisionedPrefix('es256'), {
          JWT_SECRET: '',
          JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
          JWT_ISSUER: 'https://auth.fleet.example',
          JWT_AUDIENCE: 'fleet-gateway',
        }),
      ),
    );
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  const valid = { iss: 'https://auth.fleet.example', aud: 'fleet-gateway' };

  test('accepts an ES256 token with the configured issuer and audience', async () => {
    expectAccepted(await attempt(gateway, await sign(signingKey, 'ES256', valid)));
  });

  test('refuses a token from another issuer', async () => {
    expectRefused(await attempt(gateway, await sign(signingKey, 'ES256', { ...valid, iss: 'https://evil.example' })), 'jwt issuer invalid');
  });

  test('refuses a token for another audience', async () => {
    expectRefused(await attempt(gateway, await sign(signingKey, 'ES256', { ...valid, aud: 'another-service' })), 'jwt audience invalid');
  });

  test('refuses a token signed by another ES256 key', async () => {
    const other = await generateKeyPair('ES256');
    expectRefused(await attempt(gateway, await sign(other.privateKey, 'ES256', valid)), 'invalid signature');
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { SignJWT } from 'jose';
import { createLogger } from '@fleet/shared/logger';
import { scopesOf, verifiedTokenOf, type Scope } from '../auth/require-scope';
import { createTokenVerifier } from '../auth/token-verifier';
import { accessCheck, accessGuard } from './access';
import { answerError, errorHandler } from './error-handler';

const SECRET = 'require-scope-test-secret-of-32-bytes!!';
const tokens = createTokenVerifier({ secret: SECRET, cacheSize: 10 });

function sign(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('reader')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
}

/** A read route guarded as the position reads are: the access guard for its scope, then a handler using the token. */
async function serve(scope: Scope, requiredScopes: boolean) {
  const app = express();
  const check = accessCheck({ tokens, requiredScopes, apiKeys: { requireKey: () => undefined } });
  app.get('/read', accessGuard(check, { kind: 'token', scope }), (_req, res) => {
    res.json({ sub: verifiedTokenOf(res).claims.sub });
  });
  app.use(errorHandler(answerError(createLogger('test', 'silent'))));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/read`;
  return {
    get: async (authorization?: string) => {
      const response = await fetch(url, { headers: authorization ? { authorization } : {} });
      return {
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
        challenge: response.headers.get('www-authenticate'),
      };
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('a token access guard', () => {
  test('with scopes required, a token lacking the scope is 403 E-G1/1-02 naming it; one holding it reaches the handler', async () => {
    const route = await serve('positions:read', true);
    try {
      const refused = await route.get(`Bearer ${await sign({ scope: 'positions:write' })}`);
      expect(refused).toEqual({
        status: 403,
        body: {
          code: 'E-G1/1-02',
          message: 'The token does not grant this operation',
          detail: "the token's scope claim lacks positions:read",
        },
        challenge: 'Bearer error="insufficient_scope", scope="positions:read"',
      });
      const allowed = await route.get(`Bearer ${await sign({ scope: 'positions:write positions:read' })}`);
      expect(allowed).toMatchObject({ status: 200, body: { sub: 'reader' } });
    } finally {
      await route.close();
    }
  });

  test('the token is still verified first: none is 401, a malformed one 400', async () => {
    const route = await serve('positions:read', true);
    try {
      expect((await route.get()).body.code).toBe('E-G1/1-01');
      expect((await route.get('Bearer not.a.jwt')).body.code).toBe('E-V1/1-03');
    } finally {
      await route.close();
    }
  });

  test('with scopes not required, any valid token passes', async () => {
    const route = await serve('positions:read', false);
    try {
      expect((await route.get(`Bearer ${await sign({})}`)).status).toBe(200);
    } finally {
      await route.close();
    }
  });
});

describe('scopesOf', () => {
  test('reads a space-separated scope claim; anything else grants nothing', async () => {
    const verified = async (claims: Record<string, unknown>) => tokens.verify(`Bearer ${await sign(claims)}`);
    expect([...scopesOf(await verified({ scope: '  a:b   c:d ' }))]).toEqual(['a:b', 'c:d']);
    expect([...scopesOf(await verified({ scope: ['a:b'] }))]).toEqual([]);
    expect([...scopesOf(await verified({}))]).toEqual([]);
  });
});

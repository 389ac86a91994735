// Bearer-token verification for the write routes. The algorithm is pinned to the configured key's,
// `exp` is required, an `iat` in the future is refused, and issuer, audience and the longest lifetime
// are checked when configured. A token that verified once is remembered until it expires, so a device
// posting every few seconds with the same token does not pay for a signature check each time. A verified
// token answers its claims and the subject it speaks for, which the routes authorise with.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import { AppError } from '@fleet/shared/errors';

export interface TokenVerifierOptions {
  secret?: string;
  publicKeyPem?: string;
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
  /** Longest `exp - iat` accepted; a token without `iat` is then refused, its lifetime being unknown. */
  maxLifetimeSeconds?: number;
  cacheSize: number;
}

/** What a verified token says: its claims, and whose requests it carries. */
export interface VerifiedToken {
  claims: JWTPayload;
  /**
   * Who the token speaks for: its issuer and `sub` (a subject is unique within its issuer, RFC 7519), or,
   * for a token without `sub`, that token alone, so that two clients never share what is kept per subject.
   */
  subject: string;
}

export interface TokenVerifier {
  verify(authorization: string | undefined): Promise<VerifiedToken>;
}

function invalidToken(cause: string, error?: unknown): AppError {
  return new AppError({ kind: 'tokenInvalid', detail: `Context creation failed: ${cause}`, cause: error });
}

/** Translates jose's errors into the causes clients see in `detail`. */
export function describeTokenError(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'jwt expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'exp') return 'jwt must have a numeric exp claim';
    if (error.claim === 'nbf') return 'jwt not active';
    if (error.claim === 'iss') return 'jwt issuer invalid';
    if (error.claim === 'aud') return 'jwt audience invalid';
    if (error.claim === 'iat') return 'jwt issued-at invalid';
    return `jwt claim ${error.claim} invalid`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'jwt algorithm not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'invalid signature';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key matches the jwt';
  if (error instanceof errors.JWKSTimeout || (error instanceof errors.JOSEError && error.code === 'ERR_JWKS_INVALID')) {
    return 'signing keys unavailable';
  }
  if (error instanceof errors.JOSENotSupported) return 'jwt uses an unsupported header';
  return 'jwt malformed';
}

function algorithmOf(key: KeyObject): string[] {
  if (key.asymmetricKeyType === 'rsa') return ['RS256'];
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return ['ES256'];
  throw new Error('JWT_PUBLIC_KEY must be an RSA or a P-256 EC public key (RS256 or ES256)');
}

/** 9999-12-31T23:59:59Z */
const MAX_EXP_SECONDS = 253_402_300_799;
/** How far ahead of this host's clock an issuer's clock may run before its `iat` is refused as in the future. */
export const IAT_CLOCK_SKEW_SECONDS = 60;
const bearerScheme = /^Bearer(?:[ \t]+(.*))?$/i;
const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * What follows the Bearer scheme, or undefined when no bearer token was sent. Anything that is not
 * one token ("Bearer a b", "Bearer Bearer x", "Bearer x, Bearer y") is returned as is: a token was
 * sent, and it is malformed.
 */
function bearerCredentials(authorization: string | undefined): string | undefined {
  return bearerScheme.exec(authorization ?? '')?.[1]?.trim() || undefined;
}

/** The claims jose leaves alone: an `iat` in the future, and a lifetime over the configured maximum. */
function checkIssuedAt(payload: JWTPayload, maxLifetimeSeconds: number | undefined): void {
  if (payload.iat === undefined) {
    if (maxLifetimeSeconds !== undefined) throw invalidToken('jwt must have a numeric iat claim');
    return;
  }
  if (payload.iat > Date.now() / 1000 + IAT_CLOCK_SKEW_SECONDS) throw invalidToken('jwt issued in the future');
  if (maxLifetimeSeconds !== undefined && payload.exp! - payload.iat > maxLifetimeSeconds) {
    throw invalidToken(`jwt lifetime exceeds ${maxLifetimeSeconds} seconds`);
  }
}

export function subjectOf(token: string, claims: JWTPayload): string {
  if (typeof claims.sub === 'string' && claims.sub !== '') return JSON.stringify(['sub', claims.iss ?? null, claims.sub]);
  return JSON.stringify(['token', createHash('sha256').update(token).digest('base64url')]);
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  let verifyWith: (token: string, verifyOptions: JWTVerifyOptions) => Promise<{ payload: JWTPayload }>;
  let algorithms: string[];
  if (options.secret) {
    const secret = new TextEncoder().encode(options.secret);
    verifyWith = (token, verifyOptions) => jwtVerify(token, secret, verifyOptions);
    algorithms = ['HS256'];
  } else if (options.publicKeyPem) {
    const publicKey: KeyObject = createPublicKey(options.publicKeyPem.replace(/\\n/g, '\n'));
    verifyWith = (token, verifyOptions) => jwtVerify(token, publicKey, verifyOptions);
    algorithms = algorithmOf(publicKey);
  } else if (options.jwksUrl) {
    const keySet: JWTVerifyGetKey = createRemoteJWKSet(new URL(options.jwksUrl), {
      timeoutDuration: 2000,
      cooldownDuration: 30_000,
    });
    verifyWith = (token, verifyOptions) => jwtVerify(token, keySet, verifyOptions);
    algorithms = ['RS256', 'ES256'];
  } else {
    throw new Error('no JWT key configured');
  }
  const verifyOptions: JWTVerifyOptions = {
    algorithms,
    requiredClaims: ['exp'],
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  };
  // token -> its exp in milliseconds, and what it verified to
  const verified = new LRUCache<string, { expiresAt: number; token: VerifiedToken }>({ max: options.cacheSize });

  return {
    async verify(authorization) {
      const token = bearerCredentials(authorization);
      if (!token) throw new AppError({ kind: 'tokenRequired' });

      const known = verified.get(token);
      if (known !== undefined) {
        if (known.expiresAt > Date.now()) return known.token;
        verified.delete(token);
        throw invalidToken('jwt expired');
      }
      if (!compactJws.test(token)) throw invalidToken('jwt malformed');

      try {
        const { payload } = await verifyWith(token, verifyOptions);
        if (typeof payload.exp !== 'number') throw invalidToken('jwt must have a numeric exp claim');
        // An exp written in milliseconds would otherwise make a token valid for fifty thousand years.
        if (payload.exp > MAX_EXP_SECONDS) throw invalidToken('jwt exp is not in seconds');
        checkIssuedAt(payload, options.maxLifetimeSeconds);
        const result: VerifiedToken = { claims: payload, subject: subjectOf(token, payload) };
        verified.set(token, { expiresAt: payload.exp * 1000, token: result });
        return result;
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw invalidToken(describeTokenError(error), error);
      }
    },
  };
}

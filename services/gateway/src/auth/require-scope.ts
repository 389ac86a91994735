// What a token may do, by its `scope` claim (space-separated, as RFC 8693 writes it). Checked only when
// JWT_REQUIRED_SCOPES is on: issuers that mint no scopes keep working until the operator turns it on.
import { AppError } from '@fleet/shared/errors';
import type { TokenVerifier, VerifiedToken } from './token-verifier';

export const SCOPES = {
  positionsWrite: 'positions:write',
  positionsRead: 'positions:read',
  groupsWrite: 'groups:write',
  groupsRead: 'groups:read',
  devicesWrite: 'devices:write',
  geofencesWrite: 'geofences:write',
  geofencesRead: 'geofences:read',
  eventsRead: 'events:read',
  webhooksWrite: 'webhooks:write',
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** The scopes a token's `scope` claim grants; a claim that is not a string grants none. */
export function scopesOf(token: VerifiedToken): Set<string> {
  const claim = token.claims.scope;
  return new Set(typeof claim === 'string' ? claim.split(' ').filter(Boolean) : []);
}

/** Refuses with 403 E-G1/1-02, naming the scope, a token whose `scope` lacks it; nothing when scopes are not required. */
export function checkScope(token: VerifiedToken, scope: Scope, required: boolean): void {
  if (!required || scopesOf(token).has(scope)) return;
  throw new AppError({
    kind: 'scopeMissing',
    detail: `the token's scope claim lacks ${scope}`,
    fields: { missingScope: scope },
  });
}

export interface ScopeDeps {
  tokens: TokenVerifier;
  requiredScopes: boolean;
}

/** The token the route's access check verified, for its handler. */
export function verifiedTokenOf(res: { locals: Record<string, unknown> }): VerifiedToken {
  const token = res.locals.token as VerifiedToken | undefined;
  if (!token) throw new Error('verifiedTokenOf: no token was verified for this route');
  return token;
}

/** Verifies the Authorization header's token and that it grants `scope`: the token, or the 401 or 403. */
export async function verifyWithScope(authorization: string | undefined, scope: Scope, deps: ScopeDeps): Promise<VerifiedToken> {
  const token = await deps.tokens.verify(authorization);
  checkScope(token, scope, deps.requiredScopes);
  return token;
}

// `npm run dev-token [subject] [lifetime] [--imei <imei>] [--scope "<scopes>"]`: prints an HS256 token for
// the local stack, signed with JWT_SECRET or the development secret in .dev/jwt-secret. --imei puts the
// device claim the gateway reads (JWT_DEVICE_CLAIM, `imei` when unset) into the token; --scope sets its
// `scope` claim, space-separated (positions:write positions:read groups:write groups:read devices:write).
import { parseArgs } from 'node:util';
import { SignJWT, type JWTPayload } from 'jose';
import { devCredential } from './dev-secret';

const USAGE = 'usage: npm run dev-token [subject] [lifetime] [--imei <imei>] [--scope "<scope> <scope>..."]';

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    options: { imei: { type: 'string' }, scope: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  const [subject = 'dev-device', lifetime = '24h'] = positionals;
  const claims: JWTPayload = {};
  if (values.imei !== undefined) claims[process.env.JWT_DEVICE_CLAIM || 'imei'] = values.imei;
  if (values.scope !== undefined) claims.scope = values.scope.split(/\s+/).filter(Boolean).join(' ');
  const secret = process.env.JWT_SECRET || devCredential('jwt-secret').value;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(lifetime)
    .sign(new TextEncoder().encode(secret));
  process.stdout.write(`${token}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n${USAGE}\n`);
  process.exitCode = 2;
});

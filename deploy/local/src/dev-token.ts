// `npm run dev-token [subject] [lifetime]`: prints an HS256 token for the local stack, signed with
// JWT_SECRET or the development secret in .dev/jwt-secret.
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { devCredential } from './dev-secret';

async function main(): Promise<void> {
  const { positionals } = parseArgs({ options: {}, allowPositionals: true, strict: true });
  const [subject = 'dev-device', lifetime = '24h'] = positionals;
  const secret = process.env.JWT_SECRET || devCredential('jwt-secret').value;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(lifetime)
    .sign(new TextEncoder().encode(secret));
  process.stdout.write(`${token}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\nusage: npm run dev-token [subject] [lifetime]\n`);
  process.exitCode = 2;
});

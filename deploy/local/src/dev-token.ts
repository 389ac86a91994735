// `npm run dev-token [subject] [lifetime]`: prints an HS256 token for the local stack, signed with
// JWT_SECRET or the development secret in .dev/jwt-secret.
import { SignJWT } from 'jose';
import { devCredential } from './dev-secret';

async function main(): Promise<void> {
  const [subject = 'dev-device', lifetime = '24h'] = process.argv.slice(2);
  const secret = process.env.JWT_SECRET || devCredential('jwt-secret').value;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(lifetime)
    .sign(new TextEncoder().encode(secret));
  process.stdout.write(`${token}\n`);
}

void main();

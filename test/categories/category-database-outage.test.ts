import { randomUUID } from 'node:crypto';
import { escapeIdentifier } from 'pg';
import { migrate } from '@fleet/shared/db/migrate';
import { createLogger } from '@fleet/shared/logger';
import { closeDb, db, TEST_API_KEY, testServers } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { runApiKeyCli } from '../../services/gateway/src/cli/api-key';
import { buildCategory, getCategory, insertCategory, TcpProxy, type CategoryGateway } from './category-support';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

let proxy: TcpProxy;
let stack: CategoryGateway;

beforeAll(async () => {
  const database = new URL(testServers().databaseUrl);
  proxy = await TcpProxy.start({ host: database.hostname, port: Number(database.port || 5432) });
  const proxied = new URL(database);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  stack = await startStack({ mode: 'gateway', env: { DATABASE_URL: proxied.toString(), API_KEY_REFRESH_SECONDS: '1' } });
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.cut();
  await closeKafka();
  await closeDb();
});

test('when PostgreSQL is unreachable, a cache miss responds 503 E-S1/1-03, cached categories and stored keys still work', async () => {
  const cached = await insertCategory(buildCategory());
  expect((await getCategory(stack.url, cached.id, TEST_API_KEY)).status).toBe(200);
  const out: string[] = [];
  const io = { env: { DATABASE_URL: testServers().databaseUrl }, out: (line: string) => out.push(line), err: () => undefined };
  expect(await runApiKeyCli(['create', `outage-${randomUUID()}`], io)).toBe(0);
  const storedKey = out[0]!;
  await eventually(async () => (await getCategory(stack.url, cached.id, storedKey)).status === 200, 10_000, {
    what: 'the stored key to be accepted',
  });

  await proxy.cut();
  const missed = await getCategory(stack.url, randomUUID(), TEST_API_KEY);
  expect(missed.status).toBe(503);
  expect(missed.body).toEqual({ code: 'E-S1/1-03', message: 'The database is unavailable, retry later' });
  expect(missed.headers.get('retry-after')).toBe('1');

  // Past a failed key refresh, the keys loaded before are kept.
  await eventually(async () => stack.logs.some((line) => line.msg.startsWith('cannot refresh API keys')), 15_000, {
    what: 'a key refresh to fail while PostgreSQL is away',
  });
  const served = await getCategory(stack.url, cached.id, storedKey);
  expect(served.status).toBe(200);
  expect(served.body.data).toEqual(cached);
  expect(stack.logs.filter((line) => line.msg.startsWith('cannot refresh API keys'))).toHaveLength(1);

  await proxy.resume();
  const unknown = randomUUID();
  await eventually(async () => (await getCategory(stack.url, unknown, TEST_API_KEY)).status === 404, 10_000, {
    what: 'PostgreSQL to answer again',
  });
});

test('when PostgreSQL refuses connections to the database (55000), a cache miss responds 503 E-S1/1-03', async () => {
  // A database of the test's own, since refusing connections to the run's database would fail every other test.
  const url = new URL(testServers().databaseUrl);
  url.pathname = `${url.pathname}_refusing`;
  const name = url.pathname.slice(1);
  await migrate(url.toString(), createLogger('test', 'silent'));
  const refusing = await startStack({ mode: 'gateway', env: { DATABASE_URL: url.toString() } });
  try {
    await db().query(`ALTER DATABASE ${escapeIdentifier(name)} ALLOW_CONNECTIONS false`);
    await db().query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);

    const missed = await getCategory(refusing.url, randomUUID(), TEST_API_KEY);
    expect(missed.status).toBe(503);
    expect(missed.body).toEqual({ code: 'E-S1/1-03', message: 'The database is unavailable, retry later' });
    expect(missed.headers.get('retry-after')).toBe('1');
  } finally {
    await refusing.stop();
    await db().query(`DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`);
  }
});

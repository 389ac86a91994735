// The position reads while PostgreSQL cannot be reached: a 503 the client may retry, then answers again
// once it is back.
import { closeDb, signToken, testServers, uniqueImei } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { TcpProxy, type CategoryGateway } from '../categories/category-support';
import { eventually } from '../support/eventually';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let proxy: TcpProxy;
let stack: CategoryGateway;
let auth: { authorization: string };

beforeAll(async () => {
  const database = new URL(testServers().databaseUrl);
  proxy = await TcpProxy.start({ host: database.hostname, port: Number(database.port || 5432) });
  const proxied = new URL(database);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  stack = await startStack({ mode: 'gateway', env: { DATABASE_URL: proxied.toString() } });
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.cut();
  await closeKafka();
  await closeDb();
});

async function get(path: string) {
  const response = await fetch(`${stack.url}${path}`, { headers: auth });
  return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

test('when PostgreSQL is unreachable, both reads respond 503 E-S1/1-03 with Retry-After, and answer again once it is back', async () => {
  const device = `${DEVICES_PATH}/${uniqueImei()}`;
  await proxy.cut();
  for (const path of [`${device}/last-location`, `${device}/trip-locations`]) {
    expect({ path, ...(await get(path)) }).toEqual({
      path,
      status: 503,
      body: { code: 'E-S1/1-03', message: 'The database is unavailable, retry later' },
      retryAfter: '1',
    });
  }

  await proxy.resume();
  await eventually(async () => (await get(`${device}/last-location`)).status === 404, 10_000, { what: 'PostgreSQL to answer again' });
  expect(await get(`${device}/trip-locations`)).toMatchObject({ status: 200, body: { data: [], nextCursor: null } });
});

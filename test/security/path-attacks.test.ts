// Path parameters express cannot decode (`%E0%A4%A`, a truncated UTF-8 sequence): every route of the
// table that takes a parameter answers 400 naming it, never a 500, and serves on. The category read
// answers its own invalid id (test/categories).
import { closeDb, signToken, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { routeList } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let bearer: string;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'path-attacks' });
  bearer = `Bearer ${await signToken()}`;
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const UNDECODABLE = '%E0%A4%A';
const parameterised = routeList().filter((route) => route.path.includes('/:') && route.name !== 'getProductCategory');

test.each(parameterised.map((route) => [route.name, route.method, route.path] as const))(
  '%s (%s %s) answers an undecodable parameter 400 naming it',
  async (_name, method, path) => {
    const param = /:(\w+)/.exec(path)![1]!;
    const response = await fetch(`${stack.url}${path.replace(`:${param}`, UNDECODABLE)}`, {
      method: method.toUpperCase(),
      headers: { authorization: bearer, ...(method === 'post' || method === 'patch' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'post' || method === 'patch' ? '{}' : undefined,
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { code: 'E-V1/1-06', message: 'A request parameter is invalid', detail: `${param}: is not valid percent-encoding` },
    });
  },
);

test('the parameterised routes lie under these six prefixes; a route added under another is tried above too', () => {
  const prefixes = new Set(parameterised.map((route) => route.path.slice(0, route.path.indexOf('/:'))));
  expect([...prefixes].sort()).toEqual([
    '/docs',
    '/fleet/api/v1/devices',
    '/fleet/api/v1/geofences',
    '/fleet/api/v1/vehicle-group',
    '/fleet/api/v1/webhooks',
    '/osmand',
  ]);
});

// Hostile API keys on the product-category read: oversized keys, near misses of a real key, keys with
// control characters, SQL and non-ASCII text, and repeated Authorization headers. Each is a 401 JSON
// answer (or a 431 from the HTTP server for a head over 32 KiB), never a 500, and nothing it carries
// reaches the database. (No key, a wrong key and a JWT instead of a key are in test/categories.)
import { randomUUID } from 'node:crypto';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { hashApiKey } from '../../services/gateway/src/api-keys/api-key-hash';
import { baseEnv, closeDb, db, TEST_API_KEY, provisionedPrefix } from '../support/harness';
import { databaseState } from '../support/database-state';
import { closeKafka } from '../support/kafka';
import { rawRequest } from './raw-http';
import { CATEGORY_BASE_PATH } from '../../services/gateway/src/http/routes';

const CATEGORY_PATH = CATEGORY_BASE_PATH;

let gateway: Gateway;
const categoryId = randomUUID();
/** The tables a key could reach, and this file's category, before any refused key. */
let before: Record<string, unknown>;
const state = () =>
  databaseState(['api_keys', 'product_categories'], {
    category: { text: 'SELECT * FROM product_categories WHERE id = $1', values: [categoryId] },
  });

beforeAll(async () => {
  gateway = await startGateway(gatewayConfig(baseEnv(await provisionedPrefix('api-key-attacks'))));
  await db().query('INSERT INTO product_categories (id, name, min_temperature, max_temperature) VALUES ($1, $2, 2, 8)', [
    categoryId,
    'Chilled',
  ]);
  before = await state();
});
afterAll(async () => {
  await gateway?.stop();
  await closeKafka();
  await closeDb();
});

async function read(authorization: string) {
  const response = await fetch(`${gateway.url}${CATEGORY_PATH}/${categoryId}`, { headers: { authorization } });
  const text = await response.text();
  return { status: response.status, text, contentType: response.headers.get('content-type') };
}

function expectRefused(answer: { status: number; text: string; contentType: string | null }) {
  expect(answer.status).toBe(401);
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(answer.text)).toMatchObject({ code: 'E-A1/1-01' });
}

test('the configured key reads the category (the control case)', async () => {
  expect((await read(TEST_API_KEY)).status).toBe(200);
});

test('a 10 KB key responds 401 JSON', async () => {
  expectRefused(await read('k'.repeat(10 * 1024)));
});

test('a 100 KB key responds 431: the request head is over the 32 KiB limit', async () => {
  expect((await read('k'.repeat(100 * 1024))).status).toBe(431);
});

test.each([
  ['the key with a character appended', `${TEST_API_KEY}x`],
  ['the key without its last character', TEST_API_KEY.slice(0, -1)],
  ['the key in upper case', TEST_API_KEY.toUpperCase()],
  ['the key as a Bearer credential', `Bearer ${TEST_API_KEY}`],
  ['the key twice', `${TEST_API_KEY},${TEST_API_KEY}`],
  ['SQL', "' OR '1'='1' --"],
  ['SQL that drops the keys', "x'; DROP TABLE api_keys; --"],
  // The digest the gateway keeps of the key: whoever reads it from memory or from api_keys.key_hash
  // must not be able to present it instead of the key.
  ['the SHA-256 of the key, as stored, in hex', hashApiKey(TEST_API_KEY).toString('hex')],
  ['the SHA-256 of the key, as stored, in base64', hashApiKey(TEST_API_KEY).toString('base64')],
  ['latin-1 text', 'clé-µ-ÿ'],
])('%s responds 401 JSON', async (_label, key) => {
  expectRefused(await read(key));
});

test('a key of UTF-8 bytes (not latin-1) responds 401', async () => {
  const key = Buffer.from(`${TEST_API_KEY}-🔑-ключ`, 'utf8').toString('latin1');
  expect(
    await rawRequest(
      gateway.port,
      `GET ${CATEGORY_PATH}/${categoryId} HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\nConnection: close\r\n\r\n`,
    ),
  ).toMatch(/^HTTP\/1\.1 401 /);
});

test('whitespace around the key is not part of the header value (RFC 9110), so the key still reads', async () => {
  expect((await read(`${TEST_API_KEY}\t`)).status).toBe(200);
  expect((await read(`  ${TEST_API_KEY}  `)).status).toBe(200);
});

test('a key with a control character is refused by the HTTP parser with 400, and the gateway keeps serving', async () => {
  const status = await rawRequest(
    gateway.port,
    `GET ${CATEGORY_PATH}/${categoryId} HTTP/1.1\r\nHost: x\r\nAuthorization: ${TEST_API_KEY}\u0000\r\n\r\n`,
  );
  expect(status).toMatch(/^HTTP\/1\.1 400 /);
  expect((await read(TEST_API_KEY)).status).toBe(200);
});

test('with two Authorization headers, the first decides: a wrong one first is refused whatever follows', async () => {
  const twice = (first: string, second: string) =>
    rawRequest(
      gateway.port,
      `GET ${CATEGORY_PATH}/${categoryId} HTTP/1.1\r\nHost: x\r\nAuthorization: ${first}\r\nAuthorization: ${second}\r\nConnection: close\r\n\r\n`,
    );
  expect(await twice('wrong', TEST_API_KEY)).toMatch(/^HTTP\/1\.1 401 /);
  expect(await twice(TEST_API_KEY, 'wrong')).toMatch(/^HTTP\/1\.1 200 /);
});

test('after every refused key the tables are intact: the same tables, and the category unchanged', async () => {
  expect(await state()).toEqual(before);
  expect((before.own as { category: { count: number } }).category.count).toBe(1);
  expect((await read(TEST_API_KEY)).status).toBe(200);
});

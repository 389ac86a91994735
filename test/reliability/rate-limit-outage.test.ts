// Redis, where the rate limits are counted, stops while devices post. Ingestion goes on unchecked (the
// limits fail open), each write let through is counted in /metrics, and the outage is logged once, not
// once per request; once Redis is back the limits hold again. The Redis server is the test's own.
import { createLogger } from '@fleet/shared/logger';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { RedisServer } from '../categories/category-support';
import { eventually } from '../support/eventually';
import {
  baseEnv,
  buildTrip,
  closeDb,
  db,
  postJson,
  provisionedPrefix,
  signToken,
  startWriter,
  uniqueImei,
  type Writer,
} from '../support/harness';
import { closeKafka } from '../support/kafka';
import { TRIP_LOCATION_BATCH_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';

const TRIP = TRIP_LOCATION_PATH;
const BATCH = TRIP_LOCATION_BATCH_PATH;
const UNAVAILABLE = 'rate limits unavailable (Redis): writes are let through unchecked until it answers';
const AVAILABLE = 'rate limits enforced again: Redis answers';
const PER_MINUTE = 2;

let redisServer: RedisServer;
let gateway: Gateway;
let writer: Writer;
let auth: { authorization: string };
const logs: { msg: string }[] = [];

beforeAll(async () => {
  redisServer = await RedisServer.start();
  const prefix = await provisionedPrefix('rate-limit-outage');
  const env = baseEnv(prefix, {
    REDIS_URL: redisServer.url,
    RATE_LIMIT_DEVICE_PER_MINUTE: String(PER_MINUTE),
    RATE_LIMIT_DEVICE_BURST: '0',
    // One check per request, so that each write let through counts once.
    RATE_LIMIT_SUBJECT_PER_SECOND: '0',
    RATE_LIMIT_REDIS_TIMEOUT_MS: '5000',
  });
  writer = await startWriter('trip', env);
  const logger = createLogger('gateway', 'info', { write: (line: string) => void logs.push(JSON.parse(line) as { msg: string }) });
  gateway = await startGateway(gatewayConfig(env), logger);
  auth = { authorization: `Bearer ${await signToken()}` };
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await writer?.stop();
  await redisServer?.stop();
  await closeKafka();
  await closeDb();
});

async function fallbacks(): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => /^fleet_rate_limit_fallbacks_total[ {]/.test(entry));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function stored(imei: string): Promise<number> {
  const result = await db().query<{ count: string }>('SELECT count(*) FROM trip_locations WHERE imei = $1', [imei]);
  return Number(result.rows[0]!.count);
}

/** Posts one more position than the limit lets through, one after another; the statuses in order. */
async function postOverLimit(imei: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent <= PER_MINUTE; sent += 1)
    statuses.push((await postJson(`${gateway.url}${TRIP}`, buildTrip({ imei }), auth)).status);
  return statuses;
}

const linesSaying = (msg: string) => logs.filter((line) => line.msg === msg).length;

test('Redis stopped: every post is stored unchecked, each is counted in /metrics, the outage is logged once; once Redis is back the limit holds again', async () => {
  expect(await postOverLimit(uniqueImei())).toEqual([...Array(PER_MINUTE).fill(200), 429]);
  expect(await fallbacks()).toBe(0);

  await redisServer.stop();
  const single = uniqueImei();
  const batched = uniqueImei();
  const posts = 3 * PER_MINUTE;
  for (let sent = 0; sent < posts; sent += 1) {
    expect((await postJson(`${gateway.url}${TRIP}`, buildTrip({ imei: single }), auth)).status).toBe(200);
  }
  const batch = await postJson(
    `${gateway.url}${BATCH}`,
    Array.from({ length: posts }, () => buildTrip({ imei: batched })),
    auth,
  );
  expect(batch.status).toBe(200);
  expect(batch.body.data).toMatchObject({ accepted: posts, rejected: 0 });
  expect(await stored(single)).toBe(posts);
  expect(await stored(batched)).toBe(posts);
  expect(await fallbacks()).toBe(posts + 1);
  expect(linesSaying(UNAVAILABLE)).toBe(1);
  expect(linesSaying(AVAILABLE)).toBe(0);

  await redisServer.restart();
  // The gateway reconnects on its own; until it has, posts are still let through.
  await eventually(async () => (await postOverLimit(uniqueImei())).at(-1) === 429, 30_000, { what: 'the limit to hold again' });
  expect(await postOverLimit(uniqueImei())).toEqual([...Array(PER_MINUTE).fill(200), 429]);
  expect(linesSaying(UNAVAILABLE)).toBe(1);
  expect(linesSaying(AVAILABLE)).toBe(1);
});

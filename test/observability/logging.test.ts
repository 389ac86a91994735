// Logs: one debug line per HTTP request with its request id, the same id in the writer's lines for the
// command it stored or dead-lettered, and never a token or an API key, whatever the level.
import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { start as startTripWriter, writerConfig } from '@fleet/trip-writer';
import { groupWriterConfig, start as startGroupWriter } from '@fleet/group-writer';

import {
  baseEnv,
  buildGroup,
  buildTrip,
  closeDb,
  postForm,
  postJson,
  signToken,
  TEST_API_KEY,
  type Writer,
  provisionedPrefix,
} from '../support/harness';
import { closeKafka, produceRaw } from '../support/kafka';
import { eventually } from '../support/eventually';
import { CATEGORY_BASE_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';

const TRIP = TRIP_LOCATION_PATH;

interface Captured {
  logger: Logger;
  raw: string[];
  lines(): Array<Record<string, any>>;
}

/** A logger built as the services build theirs (same redaction), writing into memory at trace level. */
function capture(service: string): Captured {
  const raw: string[] = [];
  const logger = createLogger(service, 'trace', { write: (line: string) => void raw.push(line) });
  return { logger, raw, lines: () => raw.map((line) => JSON.parse(line) as Record<string, any>) };
}

const logs = { gateway: capture('gateway'), tripWriter: capture('trip-writer'), groupWriter: capture('group-writer') };
let prefix: string;
let gateway: Gateway;
let writers: Writer[];

beforeAll(async () => {
  prefix = await provisionedPrefix('logging');
  const env = baseEnv(prefix);
  writers = [
    await startTripWriter(writerConfig(env), logs.tripWriter.logger),
    await startGroupWriter(groupWriterConfig(env), logs.groupWriter.logger),
  ];
  gateway = await startGateway(gatewayConfig(env), logs.gateway.logger);
});
afterAll(async () => {
  await gateway?.stop();
  await Promise.allSettled((writers ?? []).map((writer) => writer.stop()));
  await closeKafka();
  await closeDb();
});

function requestLine(requestId: string) {
  return logs.gateway.lines().find((line) => line.msg === 'request' && line.requestId === requestId);
}

test('each request is logged once at debug level with its method, route pattern, status, duration and request id', async () => {
  const requestId = `log-${randomUUID()}`;
  const res = await postJson(`${gateway.url}${TRIP}`, buildTrip(), {
    authorization: `Bearer ${await signToken()}`,
    'x-request-id': requestId,
  });
  expect(res.status).toBe(200);
  const line = await eventually(async () => requestLine(requestId), 10_000, { what: 'the request line' });
  expect(line).toMatchObject({ level: 20, service: 'gateway', method: 'POST', route: TRIP, status: 200 });
  expect(line.durationMs).toBeGreaterThan(0);
  expect(logs.gateway.lines().filter((entry) => entry.requestId === requestId && entry.msg === 'request')).toHaveLength(1);
});

test("the request id reaches the writer's log line for the command it stored", async () => {
  const token = await signToken();
  const tripId = `log-${randomUUID()}`;
  const groupId = `log-${randomUUID()}`;
  const trip = await postJson(`${gateway.url}${TRIP}`, buildTrip(), { authorization: `Bearer ${token}`, 'x-request-id': tripId });
  const group = await postJson(`${gateway.url}${VEHICLE_GROUP_PATH}`, buildGroup(), {
    authorization: `Bearer ${token}`,
    'x-request-id': groupId,
  });
  expect([trip.status, group.status]).toEqual([200, 200]);

  const stored = await eventually(
    async () => logs.tripWriter.lines().find((line) => line.msg === 'command stored' && line.requestId === tripId),
    10_000,
    { what: 'the trip-writer line' },
  );
  expect(stored).toMatchObject({ level: 20, service: 'trip-writer', id: trip.body.data.id, duplicate: false });
  await eventually(
    async () => logs.groupWriter.lines().find((line) => line.msg === 'command stored' && line.requestId === groupId),
    10_000,
    { what: 'the group-writer line' },
  );
});

test('a dead-lettered message is logged as a warning naming its request id', async () => {
  await produceRaw(`${prefix}.trip-locations`, [{ key: 'k', value: '{"imei":', headers: { 'request-id': 'log-dead-letter' } }]);
  const warning = await eventually(async () => logs.tripWriter.lines().find((line) => line.msg === 'dead-lettering a message'), 10_000, {
    what: 'the dead-letter warning',
  });
  expect(warning).toMatchObject({ level: 40, requestId: 'log-dead-letter' });
  expect(warning.reason).toMatch(/not JSON/);
});

test('no token and no API key appears in any log line, valid or not', async () => {
  const valid = await signToken();
  const expired = await signToken({}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
  const forged = await signToken({}, { secret: 'a-different-secret-that-is-long-enough-for-hs256' });
  const wrongKey = `wrong-key-${randomUUID()}`;
  const categoryUrl = `${gateway.url}${CATEGORY_BASE_PATH}/${randomUUID()}`;
  const ids: string[] = [];
  const traced = (headers: Record<string, string>) => {
    const id = `log-${randomUUID()}`;
    ids.push(id);
    return { ...headers, 'x-request-id': id };
  };

  const statuses = [
    (await postJson(`${gateway.url}${TRIP}`, buildTrip(), traced({ authorization: `Bearer ${valid}` }))).status,
    (await postForm(`${gateway.url}${TRIP}`, { imei: '1', gpsTime: 'x' }, traced({ authorization: `Bearer ${valid}` }))).status,
    (await postJson(`${gateway.url}${TRIP}`, buildTrip(), traced({ authorization: `Bearer ${expired}` }))).status,
    (await postJson(`${gateway.url}${TRIP}`, buildTrip(), traced({ authorization: `Bearer ${forged}` }))).status,
    (await fetch(categoryUrl, { headers: traced({ authorization: TEST_API_KEY }) })).status,
    (await fetch(categoryUrl, { headers: traced({ authorization: wrongKey }) })).status,
    (await fetch(categoryUrl, { headers: traced({ authorization: `Bearer ${valid}` }) })).status,
  ];
  expect(statuses).toEqual([200, 400, 400, 400, 404, 401, 401]);
  await eventually(async () => ids.every((id) => requestLine(id)), 10_000, { what: 'a line for every request' });

  const secrets = [valid, expired, forged, TEST_API_KEY, wrongKey].flatMap((secret) =>
    secret.split('.').length === 3 ? [secret, secret.split('.')[2]!] : [secret],
  );
  const everything = [...logs.gateway.raw, ...logs.tripWriter.raw, ...logs.groupWriter.raw].join('');
  expect(everything.length).toBeGreaterThan(0);
  for (const secret of secrets) expect(everything.includes(secret) ? secret : '').toBe('');
});

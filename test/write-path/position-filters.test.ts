// Positions fit to use: a position the trip-writer filters is still acknowledged with its id (a device
// refused would send it for ever) and stored with its reason, but it never becomes the last location,
// never reaches a live stream, and the history leaves it out unless asked for it.
import { testClient, type ApiClient } from '../support/api-client';
import { EventStream } from '../support/event-stream';
import { eventually } from '../support/eventually';
import { buildTrip, closeDb, db, uniqueImei, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { scrape } from '../support/scrape';
import { startStack } from '../support/stack';
import { DEVICES_PATH, FLEET_PATH } from '../../services/gateway/src/http/routes';

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'position-filters',
    env: { FILTER_MAX_SPEED_KMH: '1000', FILTER_MAX_ACCURACY_M: '50', FILTER_MAX_HDOP: '5' },
  });
  api = await testClient(stack);
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

async function storedFiltered(id: number): Promise<string | null> {
  const { rows } = await db().query<{ filtered: string | null }>('SELECT filtered FROM trip_locations WHERE id = $1', [id]);
  expect(rows).toHaveLength(1);
  return rows[0]!.filtered;
}

const lastLocationId = async (imei: string) => (await api.get(`${DEVICES_PATH}/${imei}/last-location`)).body?.data?.id;

async function historyIds(imei: string, includeFiltered?: boolean): Promise<Array<{ id: number; filtered?: string }>> {
  const query = new URLSearchParams({ from: minutesAgo(120), to: new Date(Date.now() + 60_000).toISOString() });
  if (includeFiltered !== undefined) query.set('includeFiltered', String(includeFiltered));
  const answer = await api.get(`${DEVICES_PATH}/${imei}/trip-locations?${query.toString()}`);
  expect(answer.status).toBe(200);
  return answer.body.data.map((position: { id: number; filtered?: string }) =>
    position.filtered === undefined ? { id: position.id } : { id: position.id, filtered: position.filtered },
  );
}

test('a fix at 0,0 is acknowledged with its id, stored as filtered zero, and is neither the last location nor in the history', async () => {
  const imei = uniqueImei();
  const good = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(10) }));
  const zero = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(5), latitude: 0, longitude: 0 }));

  expect(await storedFiltered(zero)).toBe('zero');
  expect(await storedFiltered(good)).toBeNull();
  expect(await lastLocationId(imei)).toBe(good);
  expect(await historyIds(imei)).toEqual([{ id: good }]);
  expect(await historyIds(imei, true)).toEqual([{ id: good }, { id: zero, filtered: 'zero' }]);
});

test('a jump faster than FILTER_MAX_SPEED_KMH from the newest fix is filtered, and the next fix is measured from the fix before the jump', async () => {
  const imei = uniqueImei();
  const start = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(30), latitude: -6.2, longitude: 106.8 }));
  // One minute later, about 111 km north: 6,700 km/h.
  const jump = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(29), latitude: -5.2, longitude: 106.8 }));
  // Two minutes after the start, 1 km from it: 30 km/h from the start, which the jump did not replace.
  const next = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(28), latitude: -6.191, longitude: 106.8 }));

  expect([await storedFiltered(start), await storedFiltered(jump), await storedFiltered(next)]).toEqual([null, 'jump', null]);
  expect(await lastLocationId(imei)).toBe(next);
  expect(await historyIds(imei)).toEqual([{ id: start }, { id: next }]);
});

test('a wrong first fix holds a device back for two fixes: the third of a consistent track is the last location, posted one by one', async () => {
  const imei = uniqueImei();
  // A cold start 11,000 km away, then the device reports from Jakarta every 10 s.
  const bogus = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(10), latitude: 50.1, longitude: 10.2 }));
  const track: number[] = [];
  for (let k = 0; k < 4; k += 1) {
    const gpsTime = new Date(Date.now() - 9 * 60_000 + k * 10_000).toISOString();
    track.push(await api.postTrip(buildTrip({ imei, gpsTime, latitude: -6.2 + k * 0.0003, longitude: 106.8 })));
  }

  expect(await storedFiltered(bogus)).toBeNull();
  expect(await Promise.all(track.map(storedFiltered))).toEqual(['jump', 'jump', null, null]);
  expect(await lastLocationId(imei)).toBe(track[3]);
});

test('a fix dated a day ahead of its receipt is stored as filtered ahead, and the real fix after it is the last location', async () => {
  const imei = uniqueImei();
  const real = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(2) }));
  const ahead = await api.postTrip(buildTrip({ imei, gpsTime: new Date(Date.now() + 23 * 3_600_000).toISOString() }));
  const next = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(1), latitude: -6.2001 }));

  expect([await storedFiltered(real), await storedFiltered(ahead), await storedFiltered(next)]).toEqual([null, 'ahead', null]);
  expect(await lastLocationId(imei)).toBe(next);
});

test('an accuracy or hdop attribute above its limit is filtered as accuracy, one within it is not', async () => {
  const imei = uniqueImei();
  const vague = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(20), attributes: { accuracy: 80 } }));
  const poorHdop = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(19), attributes: { hdop: 7.5 } }));
  const precise = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(18), attributes: { accuracy: 12, hdop: 1.1 } }));

  expect([await storedFiltered(vague), await storedFiltered(poorHdop), await storedFiltered(precise)]).toEqual([
    'accuracy',
    'accuracy',
    null,
  ]);
  expect(await lastLocationId(imei)).toBe(precise);
});

test('a filtered position is counted by reason on the trip-writer, and a retry of it counts nothing more', async () => {
  const metricsUrl = `http://127.0.0.1:${stack.tripWriters[0]!.metricsPort}/metrics`;
  const counted = async () => (await scrape(metricsUrl)).value('fleet_positions_filtered_total', { reason: 'zero' }) ?? 0;
  const before = await counted();
  const trip = buildTrip({ gpsTime: minutesAgo(3), latitude: 0, longitude: 0 });
  const first = await api.postTrip(trip);
  expect(await api.postTrip(trip)).toBe(first);
  // This stack's writer counts what it stores; the retry was found stored, not filtered again.
  await eventually(async () => (await counted()) === before + 1, 10_000, { what: 'the filtered position counted once' });
  expect(await counted()).toBe(before + 1);
});

test('a live stream is sent the positions fit to use and never a filtered one', async () => {
  const imei = uniqueImei();
  const stream = await EventStream.open(`${stack.url}${FLEET_PATH}/positions/stream?imei=${imei}`, { authorization: api.authorization! });
  try {
    const before = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(3) }));
    await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(2), latitude: 0, longitude: 0 }));
    const after = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(1) }));
    await eventually(() => stream.ids().includes(after), 10_000, { what: 'the last position on the stream' });
    expect(stream.ids()).toEqual([before, after]);
  } finally {
    stream.close();
  }
});

test('a device that sent only filtered positions since its last fix was still heard from: its lastSeenAt moves, its position does not', async () => {
  const imei = uniqueImei();
  const good = await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(40) }));
  const status = async () => (await api.get(`${DEVICES_PATH}/${imei}`)).body.data;
  const seenFirst = (await status()).lastSeenAt as string;
  await api.postTrip(buildTrip({ imei, gpsTime: minutesAgo(1), latitude: 0, longitude: 0 }));
  const after = await status();
  expect(after.lastPosition.id).toBe(good);
  expect(Date.parse(after.lastSeenAt)).toBeGreaterThan(Date.parse(seenFirst));
});

test('includeFiltered other than true or false is a 400 naming it', async () => {
  const answer = await api.get(`${DEVICES_PATH}/${uniqueImei()}/trip-locations?includeFiltered=yes`);
  expect(answer.status).toBe(400);
  expect(JSON.stringify(answer.body)).toContain('includeFiltered');
});

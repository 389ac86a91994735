// A live stream of many devices resumed again and again while two trip-writers commit their positions:
// row ids of different devices are not committed in id order, so a stream's place is a cursor its event
// ids carry, and a client that reconnects with the last one it received misses nothing and gets nothing
// twice, however many devices it follows and however often its connection drops.
import { EventStream as Stream } from '../support/event-stream';
import { eventually } from '../support/eventually';
import { closeKafka } from '../support/kafka';
import { buildTrip, closeDb, postJson, signToken, uniqueImei, type Stack } from '../support/harness';
import { FLEET_PATH, TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'stream-resume', tripWriters: 2 });
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const DEVICES = 20;
const ROUNDS = 20;

test(`a stream of ${DEVICES} devices dropped ${ROUNDS} times while they post gets every committed position once, each device's in order`, async () => {
  const devices = Array.from({ length: DEVICES }, () => uniqueImei());
  const url = `${stack.url}${FLEET_PATH}/positions/stream?${devices.map((imei) => `imei=${imei}`).join('&')}`;
  const stream = await Stream.open(url, auth, { reconnect: true, retryMs: 20 });
  const start = Date.now() - 3_600_000;
  const posted: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      // Every device at once, so the two writers commit their partitions' rows interleaved.
      const answers = await Promise.all(
        devices.map((imei) =>
          postJson(`${stack.url}${TRIP_LOCATION_PATH}`, buildTrip({ imei, gpsTime: new Date(start + round * 1000).toISOString() }), auth),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        posted.push(answer.body.data.id);
      }
      await eventually(() => stream.events.length > 0, 10_000, { what: 'the first event' });
      // Each drop cuts an open connection: one dropped while the last reconnect is still under way would
      // only abort that attempt, and the stream would be dropped fewer times than the rounds.
      await eventually(() => stream.connections === round + 1, 10_000, { what: 'the stream connected again' });
      stream.drop();
    }
    // Every position may arrive before the last drop's reconnection: wait for both.
    await eventually(() => stream.events.length >= posted.length && stream.connections > ROUNDS, 20_000, {
      what: 'every position posted, and the stream back after the last drop',
    });

    const received = stream.ids();
    expect([...received].sort((a, b) => a - b)).toEqual([...posted].sort((a, b) => a - b));
    for (const imei of devices) {
      const ofDevice = stream.events.filter((event) => event.data.imei === imei).map((event) => event.data.id as number);
      expect(ofDevice).toEqual([...ofDevice].sort((a, b) => a - b));
    }
  } finally {
    stream.close();
  }
});

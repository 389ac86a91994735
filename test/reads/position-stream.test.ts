// Live positions over Server-Sent Events, over real HTTP against the real stack: a stream receives each
// committed position of its devices, with the row's id, and nothing of other devices; it resumes after a
// disconnect with Last-Event-ID, with nothing missed or doubled at the seam.
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { eventually } from '../support/eventually';
import { closeKafka } from '../support/kafka';
import { buildTrip, closeDb, postJson, signToken, startStack, uniqueImei, type Stack } from '../support/harness';

let stack: Stack;
let auth: { authorization: string };

beforeAll(async () => {
  stack = await startStack('position-stream');
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

interface Received {
  event: string;
  id: string;
  data: any;
}

/** An open stream: the events received so far, and whether it has ended. */
class Stream {
  readonly events: Received[] = [];
  ended = false;
  private readonly controller = new AbortController();
  status = 0;
  body: any;

  static async open(url: string, headers: Record<string, string>): Promise<Stream> {
    const stream = new Stream();
    const response = await fetch(url, { headers, signal: stream.controller.signal });
    stream.status = response.status;
    if (response.status !== 200) {
      stream.body = await response.json();
      stream.ended = true;
      return stream;
    }
    void stream.read(response.body!.getReader());
    return stream;
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((line) => !line.startsWith(':') && line.includes(':'))
              .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
          );
          if (fields.event && fields.data) this.events.push({ event: fields.event, id: fields.id ?? '', data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
  }

  close(): void {
    this.controller.abort();
  }
}

const streamUrl = (...imeis: string[]) => `${stack.url}/fleet/api/v1/positions/stream?${imeis.map((imei) => `imei=${imei}`).join('&')}`;

async function post(trip: Record<string, unknown>): Promise<number> {
  const res = await postJson(`${stack.url}/fleet/api/v1/trip-location`, trip, auth);
  expect(res.status).toBe(200);
  return res.body.data.id;
}

test('without a token the stream is refused 401 in the usual JSON shape, before it starts', async () => {
  const stream = await Stream.open(streamUrl(uniqueImei()), {});
  expect(stream.status).toBe(401);
  expect(stream.body).toMatchObject({ code: 'E-G1/1-01' });
});

test("a post's position arrives as a position event with the post's id, and nothing of another device", async () => {
  const [followed, other] = [uniqueImei(), uniqueImei()];
  const stream = await Stream.open(streamUrl(followed), auth);
  expect(stream.status).toBe(200);

  await post(buildTrip({ imei: other }));
  const trip = buildTrip({ imei: followed });
  const id = await post(trip);

  await eventually(() => stream.events.length >= 1, 10_000, { what: 'the position event' });
  expect(stream.events[0]).toMatchObject({ event: 'position', id: String(id), data: { id, imei: followed, latitude: trip.latitude } });
  expect(stream.events.every((received) => received.data.imei === followed)).toBe(true);
  stream.close();
});

test('a batch is one event per position, in order', async () => {
  const imei = uniqueImei();
  const stream = await Stream.open(streamUrl(imei), auth);
  const start = Date.now() - 600_000;
  const trips = Array.from({ length: 5 }, (_, i) => buildTrip({ imei, gpsTime: new Date(start + i * 1000).toISOString() }));
  const res = await postJson(`${stack.url}/fleet/api/v1/trip-location/batch`, trips, auth);
  expect(res.status).toBe(200);
  const ids = res.body.data.items.map((item: { id: number }) => item.id);

  await eventually(() => stream.events.length >= 5, 10_000, { what: 'five position events' });
  expect(stream.events.map((received) => received.data.id)).toEqual(ids);
  stream.close();
});

test('reconnecting with Last-Event-ID replays what was stored meanwhile, then goes on live, nothing missed or sent twice', async () => {
  const imei = uniqueImei();
  const first = await Stream.open(streamUrl(imei), auth);
  const a = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 60_000).toISOString() }));
  await eventually(() => first.events.length >= 1, 10_000, { what: 'the first event' });
  first.close();

  const missed = [
    await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 50_000).toISOString() })),
    await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 40_000).toISOString() })),
  ];
  const again = await Stream.open(streamUrl(imei), { ...auth, 'last-event-id': String(a) });
  await eventually(() => again.events.length >= 2, 10_000, { what: 'the replayed events' });
  const live = await post(buildTrip({ imei, gpsTime: new Date(Date.now() - 30_000).toISOString() }));
  await eventually(() => again.events.length >= 3, 10_000, { what: 'the live event after the replay' });

  expect(again.events.map((received) => received.data.id)).toEqual([...missed, live]);
  again.close();
});

test('a device-bound token streams only its own device: another is 403', async () => {
  const gateway: Gateway = await startGateway(gatewayConfig({ ...stack.env, JWT_DEVICE_CLAIM: 'imei' }));
  try {
    const token = { authorization: `Bearer ${await signToken({ imei: 'own-device' })}` };
    const refused = await Stream.open(`${gateway.url}/fleet/api/v1/positions/stream?imei=someone-else`, token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'E-G1/1-03' });
  } finally {
    await gateway.stop();
  }
});

test('past MAX_STREAMS a new stream is answered 503; a gateway stopping ends its streams cleanly', async () => {
  const gateway: Gateway = await startGateway(gatewayConfig({ ...stack.env, MAX_STREAMS: '1' }));
  const url = `${gateway.url}/fleet/api/v1/positions/stream?imei=${uniqueImei()}`;
  const held = await Stream.open(url, auth);
  expect(held.status).toBe(200);
  const refused = await Stream.open(url, auth);
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ code: 'E-S1/1-07' });

  await gateway.stop();
  await eventually(() => held.ended, 10_000, { what: 'the stream to end with its gateway' });
});

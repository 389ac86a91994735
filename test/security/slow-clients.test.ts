// Slow clients cannot hold the gateway: a client sending its request head, or its body, one byte a second
// is answered 408 and its connection closed once HTTP_HEADERS_TIMEOUT_MS, or HTTP_REQUEST_TIMEOUT_MS, has
// passed; an idle keep-alive connection is announced for HTTP_KEEP_ALIVE_TIMEOUT_MS, longer than a load
// balancer keeps its own.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTrip, closeDb, db, signToken, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    mode: 'in-process',
    label: 'slow-clients',
    env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' },
  });
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

/** Most bytes a trickling client sends: far past the timeouts, so a gateway that never cuts it fails the test. */
const MAX_TRICKLED_BYTES = 30;

interface Trickled {
  /** What the gateway answered, if anything. */
  answer: string;
  /** Whether the gateway closed the connection before the client ran out of bytes to send. */
  closedByGateway: boolean;
}

/** Sends `head` at once, then `trickle` one byte a second until the gateway closes the connection. */
function trickle(head: string, trickle: string): Promise<Trickled> {
  return new Promise((resolve) => {
    const socket = net.connect(stack.gateway.port, '127.0.0.1');
    let answer = '';
    let closed = false;
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve({ answer, closedByGateway: true });
    });
    // The client's own pace: a byte a second, for as long as the gateway lets it.
    const sendSlowly = async () => {
      socket.write(head, 'latin1');
      for (const byte of trickle.slice(0, MAX_TRICKLED_BYTES)) {
        await sleep(1000);
        if (closed) return;
        socket.write(byte, 'latin1');
      }
      await sleep(1000);
      if (closed) return;
      socket.destroy();
      resolve({ answer, closedByGateway: false });
    };
    socket.once('connect', () => void sendSlowly());
  });
}

test('a request head sent one byte a second is answered 408 and its connection closed', async () => {
  const result = await trickle(`POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: gateway\r\n`, 'X-Slow: '.padEnd(MAX_TRICKLED_BYTES, 'a'));
  expect(result.closedByGateway).toBe(true);
  expect(result.answer.slice(0, result.answer.indexOf('\r\n'))).toBe('HTTP/1.1 408 Request Timeout');
}, 60_000);

test('a body sent one byte a second is answered 408, its connection closed, and nothing stored', async () => {
  const trip = buildTrip();
  const body = JSON.stringify(trip);
  const head =
    `POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: gateway\r\n` +
    `Authorization: Bearer ${await signToken()}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const result = await trickle(head, body);
  expect(result.closedByGateway).toBe(true);
  expect(result.answer.slice(0, result.answer.indexOf('\r\n'))).toBe('HTTP/1.1 408 Request Timeout');
  const stored = await db().query('SELECT 1 FROM trip_locations WHERE imei = $1', [trip.imei]);
  expect(stored.rowCount).toBe(0);
}, 60_000);

test('a body whose last byte comes after the 408 is never stored: the answer says it was not received, and it was not', async () => {
  const trip = buildTrip();
  const body = JSON.stringify(trip);
  const token = await signToken();
  // Half-open, as a client that writes its body regardless of what it reads back.
  const socket = net.connect({ port: stack.gateway.port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  let answer = '';
  const answered = new Promise<void>((resolve) =>
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n')) resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: gateway\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` +
      body.slice(0, -1),
    'latin1',
  );
  await answered;
  expect(answer.slice(0, answer.indexOf('\r\n'))).toBe('HTTP/1.1 408 Request Timeout');
  socket.write(body.slice(-1), 'latin1');

  // A create sent after it is stored, so the write path has had its turn.
  const later = await fetch(`${stack.url}${TRIP_LOCATION_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(buildTrip()),
  });
  expect(later.status).toBe(200);
  await sleep(1000);
  socket.destroy();
  const stored = await db().query('SELECT 1 FROM trip_locations WHERE imei = $1', [trip.imei]);
  expect(stored.rowCount).toBe(0);
}, 60_000);

test('a keep-alive connection is announced for 65 seconds, longer than the 60 s idle timeout of common load balancers', async () => {
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(stack.gateway.port, '127.0.0.1', () =>
      socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n', 'latin1'),
    );
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
  expect(answer).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);
});

describe('slow bodies with a valid token', () => {
  let roomy: Stack;

  beforeAll(async () => {
    // Room for four declared 1 MiB bodies, and a grace of a second before a body's pace is judged.
    roomy = await startStack({
      mode: 'in-process',
      label: 'slow-bodies',
      env: { MAX_BUFFERED_BODY_BYTES: String(4 * 1024 * 1024), BODY_RATE_GRACE_MS: '1000' },
    });
  });
  afterAll(async () => {
    await roomy?.stop();
  });

  /** Declares a 1 MiB body and sends it a byte a second until the gateway answers or closes. */
  function slowUpload(token: string): { firstByteSent: Promise<void>; outcome: Promise<Trickled> } {
    let firstByteSent!: () => void;
    const sent = new Promise<void>((resolve) => (firstByteSent = resolve));
    const outcome = new Promise<Trickled>((resolve) => {
      const socket = net.connect(roomy.gateway.port, '127.0.0.1');
      let answer = '';
      let closed = false;
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        closed = true;
        resolve({ answer, closedByGateway: true });
      });
      const sendSlowly = async () => {
        socket.write(
          `POST ${TRIP_LOCATION_PATH} HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n` +
            `Authorization: Bearer ${token}\r\nContent-Length: 1048576\r\n\r\n[`,
          'latin1',
        );
        firstByteSent();
        for (let byte = 0; byte < MAX_TRICKLED_BYTES && !closed; byte += 1) {
          await sleep(1000);
          if (!closed) socket.write(' ', 'latin1');
        }
        if (closed) return;
        socket.destroy();
        resolve({ answer, closedByGateway: false });
      };
      socket.once('connect', () => void sendSlowly());
    });
    return { firstByteSent: sent, outcome };
  }

  test('40 uploads declaring 1 MiB at a byte a second leave the other clients served, and are cut 408 with a JSON body', async () => {
    const token = await signToken();
    const uploads = Array.from({ length: 40 }, () => slowUpload(token));
    await Promise.all(uploads.map((upload) => upload.firstByteSent));

    const trip = buildTrip();
    const response = await fetch(`${roomy.url}${TRIP_LOCATION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(trip),
    });
    expect(response.status).toBe(200);

    const outcomes = await Promise.all(uploads.map((upload) => upload.outcome));
    for (const { answer, closedByGateway } of outcomes) {
      expect(closedByGateway).toBe(true);
      expect(answer.slice(0, answer.indexOf('\r\n'))).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        code: 'E-V1/1-08',
        message: 'The request body arrived too slowly',
        detail: 'the body arrived at under 1024 bytes a second',
      });
    }
  }, 60_000);
});

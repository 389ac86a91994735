// A webhook's URL as it is stored and as deliveries reach it: stored as the parser reads it (where the
// deliveries go), refused with what is wrong, and a URL naming a private address as a literal is
// refused at each delivery's connection as a name resolving to one is; a receiver's answer is read only
// up to a bound.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { gatewayConfig, start as startGateway } from '@fleet/gateway';
import { MAX_ANSWER_BYTES, postEvent, type Agents } from '../../services/event-processor/src/webhook-delivery';
import type { Delivery } from '../../services/event-processor/src/webhook-store';
import { apiClient, testClient, type ApiClient } from '../support/api-client';
import { eventually } from '../support/eventually';
import { closeDb, type Stack } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { startStack } from '../support/stack';
import { TRIP_LOCATION_PATH, WEBHOOKS_PATH } from '../../services/gateway/src/http/routes';

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'webhook-urls', env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  api = await testClient(stack);
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

const secret = 'a-secret-long-enough';

describe('a webhook URL at creation', () => {
  test('is stored and answered as deliveries will reach it: no line breaks, the host lower-cased', async () => {
    const created = await api.post(WEBHOOKS_PATH, { url: 'http://Example.COM:8080/hoo\r\nk?a=1', secret });
    expect(created.status).toBe(200);
    expect(created.body.data.url).toBe('http://example.com:8080/hook?a=1');
    expect((await api.get(`${WEBHOOKS_PATH}/${created.body.data.id}`)).body.data.url).toBe('http://example.com:8080/hook?a=1');
    await api.delete(`${WEBHOOKS_PATH}/${created.body.data.id}`);
  });

  test('is refused 400 saying what is wrong: port 0, a zone, credentials, another scheme', async () => {
    for (const [url, message] of [
      ['http://example.com:0/x', 'must not name port 0'],
      ['http://[fe80::1%25lo]:8080/x', 'must not name an IPv6 zone: a link-local address is not reachable'],
      ['http://user:pass@example.com/x', 'must not carry credentials'],
      ['ftp://example.com/x', 'must be an http or https URL'],
    ]) {
      const answer = await api.post(WEBHOOKS_PATH, { url, secret });
      expect([url, answer.status, answer.body.code, answer.body.issues]).toEqual([
        url,
        400,
        'E-V1/1-01',
        [expect.objectContaining({ path: 'url', message })],
      ]);
    }
  });

  test('a NUL in the URL, the secret or a trip attribute is a 400 naming the field, and nothing is stored', async () => {
    const before = (await api.get(WEBHOOKS_PATH)).body.data.length;
    for (const [body, field] of [
      [{ url: 'http://example.com/a\u0000b', secret }, 'url'],
      [{ url: 'http://example.com/x', secret: 'a-secret-long\u0000enough' }, 'secret'],
    ] as const) {
      const answer = await api.post(WEBHOOKS_PATH, body);
      expect([answer.status, answer.body.code, answer.body.issues]).toEqual([
        400,
        'E-V1/1-01',
        [expect.objectContaining({ path: field, message: 'must not contain a NUL character' })],
      ]);
    }
    expect((await api.get(WEBHOOKS_PATH)).body.data.length).toBe(before);
    const trip = await api.post(TRIP_LOCATION_PATH, {
      imei: '356938035643809',
      gpsTime: new Date().toISOString(),
      latitude: -6.2,
      longitude: 106.8,
      attributes: { note: 'a\u0000b' },
    });
    expect([trip.status, trip.body.code]).toEqual([400, 'E-V1/1-01']);
    // An escaped backslash before u0000 is text, not a NUL.
    const text = await api.post(WEBHOOKS_PATH, { url: 'http://example.com/x', secret: 'a-secret-\\u0000-long' });
    expect(text.status).toBe(200);
    await api.delete(`${WEBHOOKS_PATH}/${text.body.data.id}`);
  });
});

describe('a delivery', () => {
  let agents: Agents;
  beforeEach(() => {
    agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  });
  afterEach(() => {
    agents.http.destroy();
    agents.https.destroy();
  });

  const delivery = (url: string): Delivery => ({
    webhookId: 1,
    url,
    secret,
    attempt: 1,
    since: Date.now(),
    event: {
      id: 1,
      type: 'ignitionOn',
      imei: '356938035643809',
      positionId: 1,
      gpsTime: new Date().toISOString(),
      latitude: 0,
      longitude: 0,
      attributes: {},
      createdAt: new Date().toISOString(),
    },
  });

  async function receiver(answer: (res: http.ServerResponse) => void) {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      req.resume();
      answer(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, requests, port: (server.address() as AddressInfo).port };
  }

  test('to a private address named as a literal is refused without connecting, unless WEBHOOK_ALLOW_PRIVATE', async () => {
    const { server, requests, port } = await receiver((res) => res.writeHead(204).end());
    try {
      // 2130706433 is 127.0.0.1 as one number; ::ffff:127.0.0.1 is it mapped into IPv6.
      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433', '0x7f000001']) {
        await expect(postEvent(delivery(`http://${host}:${port}/hook`), false, agents)).rejects.toThrow(/is the private address/);
      }
      expect(requests).toEqual([]);
      expect(await postEvent(delivery(`http://127.0.0.1:${port}/hook`), true, agents)).toBe(204);
      expect(requests).toEqual(['/hook']);
    } finally {
      server.close();
    }
  });

  test('answered 200 with an endless body, is delivered, and the answer is cut off past MAX_ANSWER_BYTES', async () => {
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const { server } = await receiver((res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.socket!.once('close', () => (closed = true));
      const pump = () => {
        while (!closed && res.write(chunk)) written += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      pump();
    });
    try {
      expect(await postEvent(delivery(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`), true, agents)).toBe(200);
      await eventually(() => closed, 10_000, { what: 'the connection to be closed by the processor' });
      // What the socket buffers took besides the bytes read, far from the 500 MiB that 5 s of reading took.
      expect(written).toBeLessThan(MAX_ANSWER_BYTES + 32 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

test('a gateway without WEBHOOK_ALLOW_PRIVATE still refuses a literal private address at creation', async () => {
  const strict = await startGateway(gatewayConfig({ ...stack.env, WEBHOOK_ALLOW_PRIVATE: 'false' }));
  try {
    const client = apiClient(strict.url, api.authorization);
    const answer = await client.post(WEBHOOKS_PATH, { url: 'http://2130706433:8080/x', secret });
    expect(answer.status).toBe(400);
  } finally {
    await strict.stop();
  }
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pacedLoad } from './paced-load';

interface Target {
  url: string;
  /** When each request arrived, in ms since the load started. */
  arrivals: number[];
  /** The most requests the server held unanswered at once. */
  maxOpen: number;
  bodies: string[];
  server: Server;
}

let loadStartedAt = 0;

async function target(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<Target> {
  let open = 0;
  const server = createServer((request, response) => {
    found.arrivals.push(performance.now() - loadStartedAt);
    open += 1;
    found.maxOpen = Math.max(found.maxOpen, open);
    response.on('close', () => (open -= 1));
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      found.bodies.push(body);
      answer(request, response);
    });
  });
  const found: Target = { url: '', arrivals: [], maxOpen: 0, bodies: [], server };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  found.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return found;
}

const targets: Target[] = [];
afterEach(async () => {
  for (const { server } of targets.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const post = { method: 'POST' as const, path: () => '/things', headers: () => ({ 'content-type': 'application/json' }) };

test('each URL gets its requests spread over the run at the rate asked, not in a burst, and sent before the earlier ones are answered', async () => {
  const slow = (_request: IncomingMessage, response: ServerResponse) => setTimeout(() => response.end('{"id":1}'), 300);
  targets.push(await target(slow), await target(slow));
  let answered = 0;
  let sequence = 0;
  loadStartedAt = performance.now();
  const result = await pacedLoad(
    targets.map((t) => t.url),
    { ...post, body: () => JSON.stringify({ n: sequence++ }), answered: () => (answered += 1) },
    { ratePerUrl: 20, seconds: 1 },
  );

  for (const { arrivals, maxOpen, bodies } of targets) {
    expect(arrivals).toHaveLength(20);
    // Twenty at 50 ms apart span 950 ms; sent back to back they would span a few.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(700);
    // Each answer takes 300 ms: a request waiting for the one before it would never overlap it.
    expect(maxOpen).toBeGreaterThan(2);
    expect(bodies.every((body) => /^\{"n":\d+\}$/.test(body))).toBe(true);
  }
  expect(new Set(targets.flatMap((t) => t.bodies)).size).toBe(40);
  expect(result).toMatchObject({ requests: { total: 40 }, errors: 0, timeouts: 0, non2xx: 0 });
  expect(answered).toBe(40);
  // Every request was answered before pacedLoad resolved, the last ones 300 ms after they were sent.
  expect(result.latency.p50).toBeGreaterThanOrEqual(300);
  expect(result.requests.average).toBe(40);
});

test('answers other than 200, requests left unanswered and refused connections are counted apart', async () => {
  targets.push(
    await target((_request, response) => {
      response.statusCode = 503;
      response.end('{"error":"unavailable"}');
    }),
    await target(() => undefined),
  );
  const refusing = await target(() => undefined);
  await new Promise((resolve) => refusing.server.close(resolve));

  let answered = 0;
  loadStartedAt = performance.now();
  const result = await pacedLoad(
    [...targets.map((t) => t.url), refusing.url],
    { ...post, answered: () => (answered += 1) },
    { ratePerUrl: 10, seconds: 0.5, timeoutMs: 200 },
  );

  expect(result).toMatchObject({ requests: { total: 5 }, non2xx: 5, timeouts: 5, errors: 5 });
  expect(answered).toBe(0);
});

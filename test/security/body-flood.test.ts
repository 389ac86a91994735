// Many large bodies at once: the gateway, a real process, holds at most MAX_BUFFERED_BODY_BYTES of
// request bodies and answers the rest 503 with Retry-After, so its memory stays far below the 512 MiB
// limit of its Kubernetes deployment (400 concurrent 1 MB posts once took it to 561 MiB).
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { baseEnv, buildTrip, closeDb, provisionedPrefix, signToken, startWriter, type Writer } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const POSTS = 400;
const MiB = 1024 * 1024;

let gateway: ServiceProcess;
let writer: Writer;
let auth: string;

beforeAll(async () => {
  const env = baseEnv(await provisionedPrefix('body-flood'), { LOG_LEVEL: 'warn' });
  writer = await startWriter('trip', env);
  gateway = await spawnService('gateway', env);
  auth = `Bearer ${await signToken()}`;
}, 120_000);
afterAll(async () => {
  await stopAllServices();
  await writer?.stop();
  await closeKafka();
  await closeDb();
});

/** The peak resident memory of a process since it started, from the kernel's own record. */
function peakRssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmHWM for process ${pid}`);
  return Number(line[1]) * 1024;
}

interface Answer {
  status: number;
  contentType: string | undefined;
  retryAfter: string | undefined;
  code: unknown;
}

/** Posts with node:http: its sockets are not pooled, so all posts are in flight at once. */
function post(url: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: auth } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            retryAfter: res.headers['retry-after'],
            code: (JSON.parse(text) as { code?: unknown }).code,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test(`${POSTS} concurrent 1 MB posts are answered 200 or 503 with Retry-After, and the gateway stays under 300 MiB`, async () => {
  // One body for every post (a valid trip whose padding field is ignored), so the test holds 1 MB, not 400.
  const body = Buffer.from(JSON.stringify(buildTrip({ padding: 'x'.repeat(MiB - 400) })));
  expect(body.length).toBeLessThanOrEqual(MiB);

  const answers = await Promise.all(Array.from({ length: POSTS }, () => post(`${gateway.url}${TRIP_LOCATION_PATH}`, body)));

  const byStatus = new Map<number, number>();
  for (const answer of answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
  const peak = peakRssBytes(gateway.pid);
  console.log(`body-flood: ${JSON.stringify(Object.fromEntries(byStatus))}, gateway peak RSS ${(peak / MiB).toFixed(0)} MiB`);

  expect(answers.filter((answer) => ![200, 503].includes(answer.status) || !/^application\/json/.test(answer.contentType ?? ''))).toEqual(
    [],
  );
  const refused = answers.filter((answer) => answer.status === 503);
  expect(refused.filter((answer) => answer.retryAfter === undefined)).toEqual([]);
  expect(refused.filter((answer) => answer.code === 'E-S1/1-05').length).toBeGreaterThan(0);
  expect(byStatus.get(200) ?? 0).toBeGreaterThan(0);
  expect(peak).toBeLessThan(300 * MiB);
  expect(gateway.isRunning()).toBe(true);
}, 120_000);

test('a chunked body that outgrows the budget is answered 503 E-S1/1-05 with Retry-After, and one that fits is stored', async () => {
  const stack = await startStack({ mode: 'in-process', label: 'body-flood-chunked', env: { MAX_BUFFERED_BODY_BYTES: String(64 * 1024) } });
  try {
    const sendChunked = (padding: number) =>
      fetch(`${stack.url}${TRIP_LOCATION_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth },
        // A stream has no length: fetch sends it chunked.
        body: new Blob([JSON.stringify(buildTrip({ padding: 'x'.repeat(padding) }))]).stream(),
        duplex: 'half',
      } as RequestInit);

    const tooBig = await sendChunked(100 * 1024);
    expect(tooBig.status).toBe(503);
    expect(tooBig.headers.get('retry-after')).toBe('1');
    expect(await tooBig.json()).toMatchObject({ code: 'E-S1/1-05' });

    const fits = await sendChunked(1024);
    expect(fits.status).toBe(200);
  } finally {
    await stack.stop();
  }
});

// A fleet reconnecting at once while the gateway's event loop is busy: the connections wait in the
// kernel's accept queue until the gateway takes them. A queue shorter than the surge drops the rest,
// and each dropped device waits out TCP's retries (1, 3, 7, 15 s) before it is even connected. The
// gateway is frozen (SIGSTOP) so that it accepts nothing while the surge arrives.
import net from 'node:net';
import { closeKafka } from '../support/kafka';
import { closeDb } from '../support/harness';
import { stopAllServices } from '../support/processes';
import { type ProcessStack } from '../support/process-stack';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

/** Twice Node's default backlog of 511, and well within the descriptors a test process may open. */
const SURGE = 1000;

let stack: ProcessStack;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'connection-surge' });
}, 60_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

test(`${SURGE} devices connecting while the gateway accepts nothing are all connected by the kernel, then all answered`, async () => {
  const port = Number(new URL(stack.gateway.url).port);
  const sockets: net.Socket[] = [];
  let connected = 0;
  const answers: Promise<string>[] = [];

  stack.gateway.kill('SIGSTOP');
  try {
    for (let count = 0; count < SURGE; count += 1) {
      const socket = net.connect(port, '127.0.0.1', () => {
        connected += 1;
      });
      sockets.push(socket);
      answers.push(
        new Promise((resolve, reject) => {
          let answer = '';
          socket.on('data', (chunk) => {
            answer += chunk.toString('latin1');
            if (answer.includes('\r\n')) resolve(answer.slice(0, answer.indexOf('\r\n')));
          });
          socket.on('error', reject);
        }),
      );
      socket.write('GET /healthz HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n');
    }
    // Connected means in the accept queue: the frozen gateway has accepted none of them.
    await eventually(() => connected === SURGE, 20_000, { what: `${SURGE} connections completed by the kernel`, intervalMs: 50 }).catch(
      (error: Error) => {
        throw new Error(`${error.message}; ${connected} connected`);
      },
    );
  } finally {
    stack.gateway.kill('SIGCONT');
  }

  const statusLines = await Promise.all(answers);
  expect(statusLines.filter((line) => line !== 'HTTP/1.1 200 OK')).toEqual([]);
  for (const socket of sockets) socket.destroy();
}, 90_000);

// The gateway asks the broker for its topics' partitions in the background (the health check, a failed
// produce's leaders). A gateway stopped while such a request was in flight could leave a connection open:
// kafkajs's disconnect closes the connections its client knows of, and the request, going on, put a
// connected broker back in that client or connected one again, which nothing would ever close. An
// embedding process (these tests' workers among them) then never exited by itself.
import net from 'node:net';
import { setTimeout } from 'node:timers/promises';
import type { ISocketFactory } from 'kafkajs';
import { createKafka } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import { TopicDescriber } from '@fleet/write-path/kafka/topic-describer';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic } from '../support/kafka';

afterAll(() => closeKafka());

/** A client over plain sockets, each of which the test keeps to look at. */
function recordingClient(topic: string): { client: TopicDescriber; sockets: net.Socket[] } {
  const sockets: net.Socket[] = [];
  const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    sockets.push(socket);
    return socket;
  };
  const kafka = createKafka({
    brokers: testServers().kafkaBrokers.split(','),
    clientId: 'fleet-tests',
    logger: createLogger('tests', 'silent'),
    socketFactory,
  });
  return { client: new TopicDescriber(kafka.admin(), [topic]), sockets };
}

/** The connections the client has not closed (a closed one has ended its side, or is gone). */
const open = (sockets: net.Socket[]) =>
  sockets.filter((socket) => !socket.writableEnded && !socket.destroyed).map((socket) => `${socket.remoteAddress}:${socket.remotePort}`);

test('closed at any moment of a request, it leaves no connection open', async () => {
  const topic = `${uniquePrefix('describer')}.replies`;
  await createTopic(topic);
  // Where in the request the close lands depends on the machine's speed: it is tried at several moments,
  // from the request's start (the old client left one open when closed a millisecond or two in).
  const moments = [0, 1, 2, 3, 5, 10];
  const leftOpen: Array<{ afterMs: number; open: string[] }> = [];
  for (const afterMs of moments) {
    const { client, sockets } = recordingClient(topic);
    await client.connect();
    // The first request connects to the broker that leads the topic; the second is the one closed under.
    expect((await client.describe()).map(({ name }) => name)).toEqual([topic]);
    const asked = client.describe().catch(() => undefined);
    await setTimeout(afterMs);
    await client.close();
    await asked;
    leftOpen.push({ afterMs, open: open(sockets) });
    for (const socket of sockets) socket.destroy();
  }
  expect(leftOpen).toEqual(moments.map((afterMs) => ({ afterMs, open: [] })));
});

test('a request after closing is refused, and opens nothing', async () => {
  const topic = `${uniquePrefix('describer')}.replies`;
  await createTopic(topic);
  const { client, sockets } = recordingClient(topic);
  await client.connect();
  await client.close();
  const opened = sockets.length;

  await expect(client.describe()).rejects.toThrow('the topic describer is closed');
  expect(sockets.length).toBe(opened);
  expect(open(sockets)).toEqual([]);
});

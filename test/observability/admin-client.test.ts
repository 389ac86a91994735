// Every service asks Kafka through a long-lived admin client: the gateway for its topics' partitions and
// the missing-topics check, the writers and the event processor for the same and for their group's lag at
// each scrape. A service stopped while such a request was in flight could leave a connection open:
// kafkajs's disconnect closes the connections its client knows of, and the request, going on, put a
// connected broker back in that client or connected one again, which nothing would ever close. An
// embedding process (these tests' workers among them) then never exited by itself.
import net from 'node:net';
import { setTimeout } from 'node:timers/promises';
import type { Admin, ISocketFactory } from 'kafkajs';
import { Registry } from 'prom-client';
import { AdminClient } from '@fleet/shared/kafka/admin-client';
import { createKafka } from '@fleet/shared/kafka/client';
import { readConsumerLag, registerConsumerLag } from '@fleet/shared/kafka/consumer-lag';
import { missingTopics } from '@fleet/shared/kafka/topic-check';
import { createLogger } from '@fleet/shared/logger';
import { eventually } from '../support/eventually';
import { testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic } from '../support/kafka';

afterAll(() => closeKafka());

/** Long enough for kafkajs's first retries of a call (100 ms, then about twice that). */
const RETRIES_MS = 500;

/** A client over plain sockets, each of which the test keeps to look at. */
function recordingClient(): { client: AdminClient; sockets: net.Socket[] } {
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
  return { client: new AdminClient(kafka.admin()), sockets };
}

/** The connections the client has not closed (a closed one has ended its side, or is gone). */
const open = (sockets: net.Socket[]) =>
  sockets.filter((socket) => !socket.writableEnded && !socket.destroyed).map((socket) => `${socket.remoteAddress}:${socket.remotePort}`);

type Request = (admin: Admin) => Promise<unknown>;

/** The requests the services make, each as they make it. */
const requests: Record<string, (topic: string) => Request> = {
  'the topics’ partitions': (topic) => (admin) => admin.fetchTopicMetadata({ topics: [topic] }),
  'the missing topics': (topic) => (admin) => missingTopics(admin, [topic]),
  'the group’s lag': (topic) => (admin) => readConsumerLag({ admin, groupId: `${topic}.group`, topic }),
};

/**
 * Closes a client at several moments into `closedUnder` (after `warmUp` has connected it to the brokers
 * the request needs) and says, for each moment, which connections were left open. Where in the request
 * the close lands depends on the machine's speed; kafkajs's own disconnect left one open when closed a
 * millisecond or two in.
 */
async function leftOpenWhenClosed(warmUp: Request, closedUnder: Request) {
  const moments = [0, 1, 2, 3, 5, 10];
  const leftOpen: Array<{ afterMs: number; open: string[] }> = [];
  for (const afterMs of moments) {
    const { client, sockets } = recordingClient();
    await client.connect();
    // A fresh broker's group coordinator may still be loading.
    await eventually(() => client.ask(warmUp), 15_000, { what: 'a first answer' });
    const asked = client.ask(closedUnder).catch(() => undefined);
    await setTimeout(afterMs);
    await client.close();
    await asked;
    // A call still retrying behind the close would connect again within this pause.
    await setTimeout(RETRIES_MS);
    leftOpen.push({ afterMs, open: open(sockets) });
    for (const socket of sockets) socket.destroy();
  }
  return { leftOpen, noneOpen: moments.map((afterMs) => ({ afterMs, open: [] })) };
}

test.each(Object.keys(requests))('closed at any moment of a request for %s, it leaves no connection open', async (kind) => {
  const topic = `${uniquePrefix('admin')}.replies`;
  await createTopic(topic);
  const request = requests[kind]!(topic);
  const { leftOpen, noneOpen } = await leftOpenWhenClosed(request, request);
  expect(leftOpen).toEqual(noneOpen);
});

test('a request that ends before its calls do (one failed, another still running) has them closed after too', async () => {
  // As the lag's two calls at once: Promise.all settles at the first failure, and the other call goes on.
  const topic = `${uniquePrefix('admin')}.replies`;
  await createTopic(topic);
  const describe: Request = (admin) => admin.fetchTopicMetadata({ topics: [topic] });
  const failsFirst: Request = (admin) => Promise.all([describe(admin), Promise.reject(new Error('another call failed'))]);
  const { leftOpen, noneOpen } = await leftOpenWhenClosed(describe, failsFirst);
  expect(leftOpen).toEqual(noneOpen);
});

test('a request after closing is refused and opens nothing, a lag scrape among them', async () => {
  const topic = `${uniquePrefix('admin')}.replies`;
  await createTopic(topic);
  const { client, sockets } = recordingClient();
  const registry = new Registry();
  registerConsumerLag(registry, client, { groupId: `${topic}.group`, topic });
  await client.connect();
  const scraped = async () => (await registry.getSingleMetricAsString('fleet_consumer_group_lag')).includes(`topic="${topic}"`);
  await eventually(scraped, 15_000, { what: 'the lag to be scraped' });
  await client.close();
  const opened = sockets.length;

  await expect(client.ask((admin) => admin.listTopics())).rejects.toThrow('the Kafka admin client is closed');
  // A scrape during a service's stop (its metrics are served last) leaves the lag out, and reconnects nothing.
  expect(await scraped()).toBe(false);
  expect(sockets.length).toBe(opened);
  expect(open(sockets)).toEqual([]);
});

// A broker hands out producer ids from blocks it asks the active KRaft controller for. Asked for one
// with no block left, it answers "loading" until the block comes. When the controller it asked is
// frozen (alive to TCP, answering nothing), the request waits out the broker's
// controller.socket.timeout.ms before it goes to the new controller: Kafka's 30 s by default. Every new
// idempotent producer, and so every writer replacing its producer, waited that long.
// deploy/local/src/kafka-cluster.ts sets the timeout to 3 s (docker-compose.yml too).
//
// A cluster of its own: its brokers have given out no producer id yet, so the first asked of each needs
// the controller.
import { waitForLeaders } from '@fleet/shared/kafka/topics';
import type { Admin } from 'kafkajs';
import { activeController, CLUSTER_NODES, type LocalKafkaCluster } from '../../deploy/local/src/kafka-cluster';
import { eventually } from '../support/eventually';
import { connectAndSend, recordsIn, startSuiteCluster, stopSuiteCluster, type ConnectAndSend } from './suite-cluster';

/** Longer than Kafka's default controller request timeout, so that a run without the setting says so. */
const GIVE_UP_MS = 40_000;
/**
 * Half Kafka's default: the block comes after 3 s, kafkajs asks again on its own backoff (0.3 s doubling,
 * a try at about 4.5 s and the next at about 9 s), and a send to a partition of the frozen node waits
 * for its fencing; 4.0 to 7.4 s in runs by hand.
 */
const MAX_CONNECT_AND_SEND_MS = 15_000;

let dataDir: string;
let cluster: LocalKafkaCluster;
let admin: Admin;

beforeAll(async () => {
  ({ dataDir, cluster, admin } = await startSuiteCluster('frozen-controller'));
}, 240_000);
afterAll(() => stopSuiteCluster({ dataDir, cluster, admin }));

test('the active KRaft controller frozen: new idempotent producers still get their ids and send within 15 s, not after the 30 s of a request to the frozen controller', async () => {
  const topic = 'fleet-tests.frozen-controller';
  await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: CLUSTER_NODES, replicationFactor: CLUSTER_NODES }] });
  await waitForLeaders(admin, [topic]);
  const controller = activeController(dataDir);
  expect(controller).toBeDefined();
  const frozen = cluster.nodes.find((node) => node.nodeId === controller)!;

  frozen.signal('SIGSTOP');
  const frozenAt = Date.now();
  let results: ConnectAndSend[];
  try {
    // At once, before the other two have elected a new controller: the brokers' block requests go to the frozen one.
    results = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        connectAndSend(cluster.brokers, topic, `producer-${index}`, { since: frozenAt, giveUpMs: GIVE_UP_MS }),
      ),
    );
  } finally {
    frozen.signal('SIGCONT');
  }
  const failed = new Map<string, number>();
  for (const failure of results.flatMap(({ failures }) => failures)) failed.set(failure, (failed.get(failure) ?? 0) + 1);
  process.stdout.write(
    `node ${frozen.nodeId} (the active controller) frozen: producers connected and sent after ${results.map(({ ms }) => ms).join(', ')} ms; ` +
      `failed attempts: ${[...failed].map(([message, count]) => `${count} × ${message}`).join('; ') || 'none'}\n`,
  );
  for (const { ms } of results) expect(ms).toBeLessThanOrEqual(MAX_CONNECT_AND_SEND_MS);
  // A node just resumed still answers for the partitions it led, with what it held then, until it
  // learns of their new leaders: read again until every record shows.
  await eventually(async () => (await recordsIn(admin, topic)) >= 4, 30_000, { what: 'the four records in the topic' });
}, 300_000);

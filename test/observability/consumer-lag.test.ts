// Consumer lag, read from the broker's offsets: the figure KEDA's Kafka trigger scales the writers on.
// A group's lag is what a partition holds beyond the group's committed offset, or everything retained
// when the group has committed nothing; each writer serves it per partition on /metrics.
import { randomUUID } from 'node:crypto';
import { readConsumerLag } from '@fleet/shared/kafka/consumer-lag';
import { buildTrip, closeDb, postJson, signToken, type Stack } from '../support/harness';
import { eventually } from '../support/eventually';
import { closeKafka, createTopic, produceRaw, testKafka } from '../support/kafka';
import { scrapeUntil } from '../support/scrape';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

afterAll(async () => {
  await closeKafka();
  await closeDb();
});

describe('readConsumerLag', () => {
  test('counts what lies beyond the committed offset, and everything when nothing is committed', async () => {
    const topic = `lag-${randomUUID()}`;
    await createTopic(topic, 2);
    await produceRaw(
      topic,
      Array.from({ length: 5 }, (_, index) => ({ value: String(index), partition: 0 })),
    );
    const admin = testKafka().admin();
    await admin.connect();
    try {
      const groupId = `${topic}.group`;
      // The broker's group coordinator may still be loading (a fresh broker's first group); it says so.
      await eventually(() => readConsumerLag({ admin, groupId, topic }), 15_000, { what: 'the group coordinator to answer' });
      expect(await readConsumerLag({ admin, groupId, topic })).toEqual(
        expect.arrayContaining([
          { partition: 0, lag: 5 },
          { partition: 1, lag: 0 },
        ]),
      );
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] });
      expect(await readConsumerLag({ admin, groupId, topic })).toEqual(expect.arrayContaining([{ partition: 0, lag: 3 }]));
    } finally {
      await admin.disconnect();
    }
  });
});

describe("a writer's /metrics", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'in-process', label: 'consumer-lag' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('serves its group’s lag for every partition of its topic, falling to 0 once the work is committed', async () => {
    const auth = { authorization: `Bearer ${await signToken()}` };
    for (let count = 0; count < 3; count += 1)
      expect((await postJson(`${stack.url}${TRIP_LOCATION_PATH}`, buildTrip(), auth)).status).toBe(200);

    const group = `${stack.prefix}.trip-writer`;
    const topic = `${stack.prefix}.trip-locations`;
    const metrics = await scrapeUntil(
      `http://127.0.0.1:${stack.tripWriters[0]!.metricsPort}/metrics`,
      (scrape) => scrape.has('fleet_consumer_group_lag') && scrape.value('fleet_consumer_group_lag', { group, topic }) === 0,
      15_000,
    );
    const partitions = metrics.text
      .split('\n')
      .filter((line) => line.startsWith('fleet_consumer_group_lag{') && line.includes(`topic="${topic}"`));
    expect(metrics.value('fleet_consumer_group_lag', { group, topic })).toBe(0);
    expect(partitions).toHaveLength(12);
  });
});

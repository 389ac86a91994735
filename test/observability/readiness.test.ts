// Topics are provisioned, never created by a client's first use, so a missing one is named: a service
// refuses to start without the topics it needs, and a running gateway whose topic disappears answers
// /readyz 503 naming it, and 200 again once the topic is provisioned.
import { gatewayConfig, start as startGateway } from '@fleet/gateway';
import { baseEnv, closeDb, startWriter, uniquePrefix, type Stack } from '../support/harness';
import { eventually } from '../support/eventually';
import { closeKafka, provisionTopics, testKafka } from '../support/kafka';
import { startStack } from '../support/stack';

afterAll(async () => {
  await closeKafka();
  await closeDb();
});

test('a gateway without its topics does not start, and says which are missing', async () => {
  const prefix = uniquePrefix('no-topics');
  await expect(startGateway(gatewayConfig(baseEnv(prefix)))).rejects.toThrow(
    `topics ${prefix}.trip-locations, ${prefix}.vehicle-groups, ${prefix}.replies, ${prefix}.positions missing: provision them with create-topics`,
  );
});

test('a writer without its topics does not start, and says which are missing', async () => {
  const prefix = uniquePrefix('no-topics');
  await expect(startWriter('trip', baseEnv(prefix))).rejects.toThrow(`${prefix}.trip-locations`);
});

describe('a running gateway whose topic is deleted', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'in-process', label: 'readiness', tripWriters: 0, groupWriters: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('answers /readyz 503 naming the topic, and 200 once it is provisioned again', async () => {
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'up', redis: 'up', kafka: 'up' } });

    const admin = testKafka().admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [`${stack.prefix}.vehicle-groups`] });
    } finally {
      await admin.disconnect();
    }
    // Kafka deletes a topic in the background: it is listed for a moment after the request.
    const missing = await eventually(
      async () => {
        const response = await fetch(`${stack.url}/readyz`);
        return response.status === 503 ? response : undefined;
      },
      15_000,
      { what: '/readyz to answer 503' },
    );
    expect(await missing.json()).toEqual({
      status: 'not ready',
      checks: { postgres: 'up', redis: 'up', kafka: 'down' },
      detail: `topic ${stack.prefix}.vehicle-groups missing: provision them with create-topics (node shared/dist/cli/create-topics.js)`,
    });

    // Until the deletion has finished, Kafka refuses to create the topic again.
    await eventually(() => provisionTopics(stack.prefix).then(() => true), 15_000, { what: 'the topic to be created again' });
    expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
  });
});

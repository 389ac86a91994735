// Several gateways on one set of topics: each reads only its own share of the reply partitions, a reply
// reaches the gateway that asked and no other, a gateway joining under load costs at most retry-safe
// 503s (never an answer naming another request's row), and a gateway with no reply partition left says
// so in /readyz and refuses writes at once.
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, createTopic } from '../support/kafka';
import { boundedWait } from '../support/deadline';
import { eventually } from '../support/eventually';
import { baseEnv, buildTrip, closeDb, db, postJson, signToken, startWriter, uniquePrefix, type Stack } from '../support/harness';
import { scrape } from '../support/scrape';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let auth: { authorization: string };

beforeAll(async () => {
  auth = { authorization: `Bearer ${await signToken()}` };
});
afterAll(async () => {
  await closeKafka();
  await closeDb();
});

async function ready(gateway: Gateway): Promise<boolean> {
  return (await fetch(`${gateway.url}/readyz`)).status === 200;
}

async function repliesRead(gateway: Gateway): Promise<{ self: number; other: number }> {
  const metrics = await scrape(`${gateway.url}/metrics`);
  return {
    self: metrics.value('fleet_gateway_replies_read_total', { owner: 'self' }),
    other: metrics.value('fleet_gateway_replies_read_total', { owner: 'other' }),
  };
}

/** The id stored for each trip, by imei. */
async function storedIds(trips: Array<Record<string, unknown>>): Promise<Map<string, number>> {
  const { rows } = await db().query<{ imei: string; id: string }>('SELECT imei, id FROM trip_locations WHERE imei = ANY($1)', [
    trips.map((trip) => String(trip.imei)),
  ]);
  return new Map(rows.map((row) => [row.imei, Number(row.id)]));
}

describe('four gateways', () => {
  let stack: Stack;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    stack = await startStack({ mode: 'in-process', label: 'gateways' });
    gateways.push(stack.gateway);
    for (let added = 0; added < 3; added += 1) gateways.push(await startGateway(gatewayConfig(stack.env)));
    await eventually(async () => (await Promise.all(gateways.map(ready))).every(Boolean), 60_000, { what: 'all four gateways ready' });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(gateways.slice(1).map((gateway) => gateway.stop()));
    await stack?.stop();
  });

  test('under steady load, each answers with its own rows, and at most 5% of the replies it reads are another’s', async () => {
    const before = await Promise.all(gateways.map(repliesRead));
    const trips = gateways.map(() => Array.from({ length: 150 }, () => buildTrip()));
    const answers = await Promise.all(
      gateways.map((gateway, index) =>
        Promise.all(trips[index]!.map((trip) => postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, trip, auth))),
      ),
    );

    const stored = await storedIds(trips.flat());
    gateways.forEach((_gateway, index) => {
      expect(answers[index]!.map((answer) => answer.status)).toEqual(trips[index]!.map(() => 200));
      expect(answers[index]!.map((answer) => answer.body.data.id)).toEqual(trips[index]!.map((trip) => stored.get(String(trip.imei))));
    });
    const after = await Promise.all(gateways.map(repliesRead));
    gateways.forEach((_gateway, index) => {
      const self = after[index]!.self - before[index]!.self;
      const other = after[index]!.other - before[index]!.other;
      expect(self).toBe(150);
      expect(other).toBeLessThanOrEqual(0.05 * (self + other));
    });
  });

  test('a fifth gateway joining under load: every answer is its own row or a retry-safe JSON 503, and every retry is stored once', async () => {
    const trips: Array<Record<string, unknown>> = [];
    const answers: Array<Awaited<ReturnType<typeof postJson>>> = [];
    let joined: Gateway | undefined;
    const joining = startGateway(gatewayConfig(stack.env)).then((gateway) => (joined = gateway));
    try {
      // Rounds of posts to the four gateways until the fifth has joined and is ready, and three more after.
      let roundsAfter = 0;
      const giveUp = Date.now() + boundedWait(60_000).ms;
      while (roundsAfter < 3 && Date.now() < giveUp) {
        const round = Array.from({ length: 40 }, () => buildTrip());
        trips.push(...round);
        answers.push(
          ...(await Promise.all(round.map((trip, index) => postJson(`${gateways[index % 4]!.url}${TRIP_LOCATION_PATH}`, trip, auth)))),
        );
        if (joined && (await ready(joined))) roundsAfter += 1;
      }
      expect(roundsAfter).toBe(3);

      const statuses = new Set(answers.map((answer) => answer.status));
      expect([...statuses].filter((status) => status !== 200 && status !== 503)).toEqual([]);
      for (const answer of answers.filter((answer) => answer.status === 503)) expect(answer.body.code).toMatch(/^E-S1\/1-0[12]$/);

      const retried = await Promise.all(
        trips.map(async (trip, index) =>
          answers[index]!.status === 200
            ? answers[index]!
            : eventually(
                async () => {
                  const again = await postJson(`${gateways[0]!.url}${TRIP_LOCATION_PATH}`, trip, auth);
                  return again.status === 200 ? again : undefined;
                },
                30_000,
                { what: 'a retried post answered 200' },
              ),
        ),
      );
      const stored = await storedIds(trips);
      expect(stored.size).toBe(trips.length);
      expect(retried.map((answer) => answer.body.data.id)).toEqual(trips.map((trip) => stored.get(String(trip.imei))));
    } finally {
      await (await joining).stop();
    }
  }, 120_000);
});

test('a gateway given no reply partition (more gateways than partitions) is not ready, says why, and refuses writes at once', async () => {
  // Topics of this test's own, with a reply topic of two partitions for three gateways.
  const prefix = uniquePrefix('few-replies');
  const topics = topicsFor(prefix);
  await Promise.all([
    createTopic(topics.tripLocations, 12),
    createTopic(topics.vehicleGroups, 3),
    createTopic(topics.replies, 2),
    createTopic(topics.deadLetter, 3),
    createTopic(topics.positions, 12),
  ]);
  const env = baseEnv(prefix);
  const writer = await startWriter('trip', env);
  const gateways: Gateway[] = [];
  try {
    for (let count = 0; count < 3; count += 1) gateways.push(await startGateway(gatewayConfig(env)));
    const readiness = await eventually(
      async () => {
        const answers = await Promise.all(gateways.map((gateway) => fetch(`${gateway.url}/readyz`)));
        const statuses = answers.map((answer) => answer.status).sort();
        return statuses.join() === '200,200,503'
          ? Promise.all(answers.map(async (answer) => ({ status: answer.status, body: await answer.json() })))
          : undefined;
      },
      60_000,
      { what: 'two gateways ready and the third not' },
    );
    const idle = gateways[readiness.findIndex((answer) => answer.status === 503)]!;
    expect(readiness.find((answer) => answer.status === 503)!.body).toMatchObject({
      status: 'not ready',
      detail: `this gateway owns no partition of ${topics.replies}: run no more gateways than its partitions`,
    });
    const refused = await postJson(`${idle.url}${TRIP_LOCATION_PATH}`, buildTrip(), auth);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('E-S1/1-01');
    for (const gateway of gateways.filter((gateway) => gateway !== idle)) {
      expect((await postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, buildTrip(), auth)).status).toBe(200);
    }
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await writer.stop();
  }
}, 120_000);

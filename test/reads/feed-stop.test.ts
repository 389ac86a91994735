// A gateway's live feeds start with its first stream: the position feed joins a consumer group of its
// own, the events feed opens a PostgreSQL connection that LISTENs. A gateway stopped while one of them was
// still starting left the start to finish on its own: a consumer then joined the group after the stop, or
// a connection was opened that nothing would close. A start that failed half-way left its connection open
// as well.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createKafka } from '@fleet/shared/kafka/client';
import { createLogger } from '@fleet/shared/logger';
import { eventually } from '../support/eventually';
import { closeDb, db, testServers, uniquePrefix } from '../support/harness';
import { closeKafka, createTopic, testKafka } from '../support/kafka';
import { EventFeed } from '../../services/gateway/src/streams/event-feed';
import { PositionFeed } from '../../services/gateway/src/streams/position-feed';

const logger = createLogger('tests', 'silent');

afterAll(async () => {
  await closeKafka();
  await closeDb();
});

/** Moments into a start at which the stop lands: the machine's speed decides which step each one hits. */
const MOMENTS_MS = [0, 2, 10, 30, 100, 300];

test('a position feed stopped at any moment of its start leaves no consumer in its group', async () => {
  const topic = `${uniquePrefix('feed-stop')}.positions`;
  await createTopic(topic, 2);
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const members: Array<{ afterMs: number; members: number; started: string }> = [];
    for (const afterMs of MOMENTS_MS) {
      const groupId = `${topic}.stream.${afterMs}`;
      const feed = new PositionFeed({
        kafka: createKafka({ brokers: testServers().kafkaBrokers.split(','), clientId: 'fleet-tests', logger }),
        topic,
        groupId,
        settings: { allowAutoTopicCreation: false, fetchMaxWaitMs: 100, fetchMinBytes: 1 },
        logger,
      });
      const started = feed.ready().then(
        () => 'ready',
        (error: Error) => error.message,
      );
      await sleep(afterMs);
      await feed.stop();
      const outcome = await started;
      const [group] = (await admin.describeGroups([groupId])).groups;
      members.push({ afterMs, members: group?.members.length ?? 0, started: outcome === 'ready' ? 'ready' : 'refused' });
    }
    // Whether a start got as far as ready before the stop depends on the moment; what it leaves does not.
    expect(members.map(({ afterMs, members: count }) => ({ afterMs, members: count }))).toEqual(
      MOMENTS_MS.map((afterMs) => ({ afterMs, members: 0 })),
    );
    // A stop that lands first makes the start give up, as the stream asking for it is told.
    expect(members[0]!.started).toBe('refused');
  } finally {
    await admin.disconnect();
  }
});

test('a position feed refuses to start once stopped', async () => {
  const feed = new PositionFeed({
    kafka: createKafka({ brokers: testServers().kafkaBrokers.split(','), clientId: 'fleet-tests', logger }),
    topic: `${uniquePrefix('feed-stop')}.positions`,
    groupId: `${uniquePrefix('feed-stop')}.stream`,
    settings: { allowAutoTopicCreation: false, fetchMaxWaitMs: 100, fetchMinBytes: 1 },
    logger,
  });
  await feed.stop();
  await expect(feed.ready()).rejects.toThrow('the position feed is stopped');
});

describe('the events feed', () => {
  // A database of its own, so that its connections are told from every other test's.
  const database = `fleet_test_feed_${randomUUID().replaceAll('-', '')}`;
  const url = new URL(testServers().databaseUrl);
  url.pathname = `/${database}`;
  const connections = async () =>
    Number((await db().query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE datname = $1', [database])).rows[0]!.count);

  beforeAll(async () => {
    await db().query(`CREATE DATABASE ${database}`);
  });
  afterAll(async () => {
    await db().query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  test('whose first reading fails leaves no connection open', async () => {
    // No events table yet: the feed connects and LISTENs, and its first statement fails.
    const feed = new EventFeed({ connectionString: url.toString(), logger });
    await expect(feed.ready()).rejects.toThrow('relation "events" does not exist');
    await eventually(async () => (await connections()) === 0, 5_000, { what: 'the failed connection to end' });
    await feed.stop();
  });

  const withEventsTable = async () => {
    const setup = new Client({ connectionString: url.toString() });
    await setup.connect();
    await setup.query('CREATE TABLE IF NOT EXISTS events (id bigint PRIMARY KEY)');
    await setup.end();
  };
  /** Sessions ever opened on the database (PostgreSQL counts each when it ends, at the latest). */
  const sessionsOpened = async () => {
    const client = await db().connect();
    try {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ sessions: string }>('SELECT sessions FROM pg_stat_database WHERE datname = $1', [database]);
      return Number(rows[0]!.sessions);
    } finally {
      client.release();
    }
  };

  test('stopped at any moment of its start leaves no connection open', async () => {
    await withEventsTable();
    const left: Array<{ afterMs: number; open: number }> = [];
    for (const afterMs of MOMENTS_MS) {
      const feed = new EventFeed({ connectionString: url.toString(), logger });
      const started = feed.ready().catch(() => undefined);
      await sleep(afterMs);
      await feed.stop();
      await started;
      // The server notices a closed connection a moment after the client has ended it.
      await eventually(async () => (await connections()) === 0, 2_000).catch(() => undefined);
      left.push({ afterMs, open: await connections() });
    }
    expect(left).toEqual(MOMENTS_MS.map((afterMs) => ({ afterMs, open: 0 })));
  });

  test('stopped while reconnecting opens no connection after the stop', async () => {
    await withEventsTable();
    // A session is counted when it ends at the latest: the count is taken once it holds still.
    const settled = async () => {
      const first = await sessionsOpened();
      await sleep(200);
      return first === (await sessionsOpened()) ? { sessions: first } : undefined;
    };
    const { sessions: before } = await eventually(settled, 5_000, { what: 'the session count to settle' });
    const feed = new EventFeed({ connectionString: url.toString(), logger });
    await feed.ready();
    // The server ends the feed's connection; the feed pauses before connecting again, and is stopped then.
    await db().query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
    await eventually(async () => (await connections()) === 0, 5_000, { what: 'the connection to end' });
    await feed.stop();
    // Past the reconnect pause the loop would have connected again.
    await sleep(1500);
    expect(await connections()).toBe(0);
    expect((await eventually(settled, 5_000, { what: 'the session count to settle' })).sessions).toBe(before + 1);
  });
});

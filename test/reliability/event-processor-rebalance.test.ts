// The event processor's partitions change hands under load: a second processor joins and the first
// leaves (SIGTERM), and a processor frozen (SIGSTOP) past its session loses its partitions to another,
// then wakes up with the batch it was holding. Each time, every event is raised once, never twice and
// never not at all: twenty devices each toggle their ignition with every position, and afterwards each
// device has exactly one ignition event per change, each on the position that made it, in order.
import { setTimeout as sleep } from 'node:timers/promises';
import { testClient, type ApiClient } from '../support/api-client';
import { eventually } from '../support/eventually';
import { closeDb, db, uniqueDeviceImei } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { type ProcessStack } from '../support/process-stack';
import { stopAllServices, type ServiceProcess } from '../support/processes';
import { scrape } from '../support/scrape';
import { startStack } from '../support/stack';

let stack: ProcessStack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'event-processor-rebalance', eventProcessors: 1 });
  api = await testClient(stack.gateway);
}, 120_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

const DEVICES = 20;

interface Track {
  devices: string[];
  /** Each device's position ids, in the order they were posted. */
  ids: Map<string, number[]>;
  posted(): number;
  done: Promise<void>;
}

/** Each device posts `positions` fixes `pauseMs` apart, its ignition on, off, on, ... */
function postTracks(positions: number, pauseMs: number): Track {
  const devices = Array.from({ length: DEVICES }, () => uniqueDeviceImei());
  const ids = new Map<string, number[]>(devices.map((imei) => [imei, []]));
  const start = Date.now() - 60 * 60_000;
  let posted = 0;
  const done = Promise.all(
    devices.map(async (imei) => {
      for (let i = 0; i < positions; i += 1) {
        const id = await api.postTrip({
          imei,
          gpsTime: new Date(start + i * 5000).toISOString(),
          latitude: 52.52,
          longitude: 13.4,
          speed: 10,
          ignition: i % 2 === 0,
        });
        ids.get(imei)!.push(id);
        posted += 1;
        await sleep(pauseMs);
      }
    }),
  ).then(() => undefined);
  return { devices, ids, posted: () => posted, done };
}

const postedShare = (track: Track, positions: number, share: number) =>
  eventually(() => track.posted() >= DEVICES * positions * share, 60_000, { what: `${share * 100}% of the positions posted` });

/** The positions a processor has applied its rules to, by its own count. */
async function processedBy(processor: ServiceProcess): Promise<number> {
  return (await scrape(`${processor.url}/metrics`)).value('fleet_events_positions_total');
}

/** Waits until the processors have caught up with every device's last position, then checks each device's events. */
async function expectEachEventOnce(track: Track): Promise<void> {
  const { devices, ids } = track;
  await eventually(
    async () => {
      const { rows } = await db().query('SELECT imei, last_position_id FROM event_device_states WHERE imei = ANY($1::text[])', [devices]);
      return rows.length === DEVICES && rows.every((row) => Number(row.last_position_id) === ids.get(row.imei)!.at(-1));
    },
    60_000,
    { what: 'the processors to catch up' },
  );
  const { rows } = await db().query('SELECT imei, type, position_id FROM events WHERE imei = ANY($1::text[]) ORDER BY id', [devices]);
  for (const imei of devices) {
    const its = rows.filter((row) => row.imei === imei).map((row) => [row.type, Number(row.position_id)]);
    const expected = ids
      .get(imei)!
      .slice(1)
      .map((id, index) => [index % 2 === 0 ? 'ignitionOff' : 'ignitionOn', id]);
    expect([imei, its]).toEqual([imei, expected]);
  }
}

test('a second processor joins mid-load and the first then leaves: both took part, and each event is raised once', async () => {
  const positions = 60;
  const [first] = stack.eventProcessors;
  const track = postTracks(positions, 100);

  await postedShare(track, positions, 0.25);
  const joiner = await stack.addEventProcessor();
  // The join moved partitions in use: the new member processes positions of its own.
  await eventually(async () => (await processedBy(joiner)) > 0, 30_000, { what: 'the joiner to process positions' });

  await postedShare(track, positions, 0.6);
  expect(await processedBy(first!)).toBeGreaterThan(0);
  expect(await first!.stop()).toBe(0);
  const beforeAlone = await processedBy(joiner);
  await track.done;

  await expectEachEventOnce(track);
  // Alone, the joiner took the leaver's partitions too.
  expect(await processedBy(joiner)).toBeGreaterThan(beforeAlone);
}, 150_000);

test('a processor frozen past its session loses its partitions to another, and, woken, raises nothing twice', async () => {
  const positions = 100;
  const [held] = stack.eventProcessors.filter((processor) => processor.isRunning());
  const other = await stack.addEventProcessor();
  const track = postTracks(positions, 150);

  await eventually(async () => (await processedBy(other)) > 0, 30_000, { what: 'the new processor to process positions' });
  await postedShare(track, positions, 0.3);
  held!.kill('SIGSTOP');
  try {
    // Past the session (6 s here) the group moves the frozen member's partitions to the other: every
    // device's state then moves past positions posted after the freeze, those of the frozen member's
    // devices too.
    const atFreeze = new Map(track.devices.map((imei) => [imei, track.ids.get(imei)!.length]));
    await eventually(
      async () => {
        const { rows } = await db().query('SELECT imei, last_position_id FROM event_device_states WHERE imei = ANY($1::text[])', [
          track.devices,
        ]);
        return (
          rows.length === DEVICES &&
          rows.every((row) => {
            const later = track.ids.get(row.imei)![atFreeze.get(row.imei)! + 1];
            return later !== undefined && Number(row.last_position_id) >= later;
          })
        );
      },
      40_000,
      { what: "every device's positions since the freeze processed, the frozen member's devices too" },
    );
  } finally {
    held!.kill('SIGCONT');
  }
  await track.done;

  await expectEachEventOnce(track);
  expect(held!.isRunning()).toBe(true);
  expect(other.isRunning()).toBe(true);
}, 180_000);

// The event processor's partitions change hands under load: the processor SIGKILLed twice and started
// again, a second processor joining and the first leaving (SIGTERM), and a processor frozen (SIGSTOP) past
// its session losing its partitions to another, then waking up. Each time, every event is raised once,
// never twice and never not at all (the devices toggle their ignition with every position: one event per
// position after a device's first, each on the position that made it, in order).
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
  stack = await startStack({ mode: 'processes', label: 'event-processor-faults', eventProcessors: 1 });
  api = await testClient(stack.gateway);
}, 120_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

const DEVICES = 20;

interface IgnitionTracks {
  devices: string[];
  /** Each device's position ids, in the order they were posted. */
  ids: Map<string, number[]>;
  posted(): number;
  /** Resolves once every device has posted all its positions. */
  done: Promise<void>;
}

/** DEVICES new devices each post `positions` fixes `pauseMs` apart, an hour ago, ignition on, off, on, ... */
function postIgnitionTracks(positions: number, pauseMs: number): IgnitionTracks {
  const imeis = Array.from({ length: DEVICES }, () => uniqueDeviceImei());
  const ids = new Map<string, number[]>(imeis.map((imei) => [imei, []]));
  const start = Date.now() - 60 * 60_000;
  let posted = 0;
  const done = Promise.all(
    imeis.map(async (imei) => {
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
  return { devices: imeis, ids, posted: () => posted, done };
}

/** The devices whose event state has reached `beyond(imei)`, a position id (undefined: not yet posted). */
async function devicesProcessedBeyond(tracks: IgnitionTracks, beyond: (imei: string) => number | undefined): Promise<number> {
  const { rows } = await db().query('SELECT imei, last_position_id FROM event_device_states WHERE imei = ANY($1::text[])', [
    tracks.devices,
  ]);
  return rows.filter((row) => {
    const id = beyond(row.imei);
    return id !== undefined && Number(row.last_position_id) >= id;
  }).length;
}

/** Waits until the processors have reached every device's last position, then checks each device's events. */
async function expectEachEventOnce(tracks: IgnitionTracks): Promise<void> {
  const { devices, ids } = tracks;
  await eventually(async () => (await devicesProcessedBeyond(tracks, (imei) => ids.get(imei)!.at(-1))) === devices.length, 60_000, {
    what: 'the processors to catch up',
  });
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

const postedShare = (tracks: IgnitionTracks, positions: number, share: number) =>
  eventually(() => tracks.posted() >= DEVICES * positions * share, 60_000, { what: `${share * 100}% of the positions posted` });

/** The positions a processor has applied its rules to, by its own count. */
async function processedBy(processor: ServiceProcess): Promise<number> {
  return (await scrape(`${processor.url}/metrics`)).value('fleet_events_positions_total');
}

test('killed twice mid-load and restarted, the processor leaves exactly the expected events', async () => {
  const positions = 40;
  const tracks = postIgnitionTracks(positions, 20);

  for (const share of [0.3, 0.6]) {
    await postedShare(tracks, positions, share);
    const processor = stack.eventProcessors.at(-1)!;
    processor.kill('SIGKILL');
    await processor.exited;
    await stack.addEventProcessor();
  }
  await tracks.done;

  await expectEachEventOnce(tracks);
});

test('a second processor joins mid-load and the first then leaves: both took part, and each event is raised once', async () => {
  const positions = 60;
  const [first] = stack.eventProcessors.filter((processor) => processor.isRunning());
  const tracks = postIgnitionTracks(positions, 100);

  await postedShare(tracks, positions, 0.25);
  const joiner = await stack.addEventProcessor();
  // The join moved partitions in use: the new member processes positions of its own.
  await eventually(async () => (await processedBy(joiner)) > 0, 30_000, { what: 'the joiner to process positions' });

  await postedShare(tracks, positions, 0.6);
  expect(await processedBy(first!)).toBeGreaterThan(0);
  expect(await first!.stop()).toBe(0);
  const beforeAlone = await processedBy(joiner);
  await tracks.done;

  await expectEachEventOnce(tracks);
  // Alone, the joiner took the leaver's partitions too.
  expect(await processedBy(joiner)).toBeGreaterThan(beforeAlone);
}, 150_000);

test('a processor frozen past its session loses its partitions to another, and, woken, raises nothing twice', async () => {
  const positions = 100;
  const [held] = stack.eventProcessors.filter((processor) => processor.isRunning());
  const other = await stack.addEventProcessor();
  const tracks = postIgnitionTracks(positions, 150);

  await eventually(async () => (await processedBy(other)) > 0, 30_000, { what: 'the new processor to process positions' });
  await postedShare(tracks, positions, 0.3);
  held!.kill('SIGSTOP');
  try {
    // Past the session (6 s here) the group moves the frozen member's partitions to the other: every
    // device's state then moves past positions posted after the freeze, those of the frozen member's
    // devices too.
    const atFreeze = new Map(tracks.devices.map((imei) => [imei, tracks.ids.get(imei)!.length]));
    await eventually(
      async () => (await devicesProcessedBeyond(tracks, (imei) => tracks.ids.get(imei)![atFreeze.get(imei)! + 1])) === DEVICES,
      40_000,
      { what: "every device's positions since the freeze processed, the frozen member's devices too" },
    );
  } finally {
    held!.kill('SIGCONT');
  }
  await tracks.done;

  await expectEachEventOnce(tracks);
  expect(held!.isRunning()).toBe(true);
  expect(other.isRunning()).toBe(true);
}, 180_000);

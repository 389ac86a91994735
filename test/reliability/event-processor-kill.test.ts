// The event processor SIGKILLed under load, twice, and started again: every event is raised once, never
// twice and never not at all. Twenty devices each toggle their ignition with every position while the
// positions keep coming; afterwards each device has exactly one ignition event per change, each on the
// position that made it, in order.
import { setTimeout as sleep } from 'node:timers/promises';
import { testClient, type ApiClient } from '../support/api-client';
import { eventually } from '../support/eventually';
import { closeDb, db, uniqueDeviceImei } from '../support/harness';
import { closeKafka } from '../support/kafka';
import { type ProcessStack } from '../support/process-stack';
import { stopAllServices } from '../support/processes';
import { startStack } from '../support/stack';

let stack: ProcessStack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'event-processor-kill', eventProcessors: 1 });
  api = await testClient(stack.gateway);
}, 120_000);
afterAll(async () => {
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

const DEVICES = 20;
const POSITIONS = 40;

test('killed twice mid-load and restarted, the processor leaves exactly the expected events', async () => {
  const devices = Array.from({ length: DEVICES }, () => uniqueDeviceImei());
  const ids = new Map<string, number[]>(devices.map((imei) => [imei, []]));
  const start = Date.now() - 60 * 60_000;
  let posted = 0;
  const load = Promise.all(
    devices.map(async (imei) => {
      for (let i = 0; i < POSITIONS; i += 1) {
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
        await sleep(20);
      }
    }),
  );

  for (const share of [0.3, 0.6]) {
    await eventually(() => posted >= DEVICES * POSITIONS * share, 60_000, { what: `${share * 100}% of the positions posted` });
    const processor = stack.eventProcessors.at(-1)!;
    processor.kill('SIGKILL');
    await processor.exited;
    await stack.addEventProcessor();
  }
  await load;

  await eventually(
    async () => {
      const { rows } = await db().query('SELECT imei, last_position_id FROM event_device_states WHERE imei = ANY($1::text[])', [devices]);
      return rows.length === DEVICES && rows.every((row) => Number(row.last_position_id) === ids.get(row.imei)!.at(-1));
    },
    60_000,
    { what: 'the restarted processor to catch up' },
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
});

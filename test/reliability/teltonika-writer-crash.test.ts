// Fault: the trip-writer is killed with SIGKILL while Teltonika devices wait for their packets'
// acknowledgements, and another is started. A device acknowledged nothing for a packet sends it again
// (after reconnecting, as a device does when its acknowledgement timer runs out), so every record must
// be stored exactly once: none lost with a killed writer, none twice from a resend.
import net from 'node:net';
import { freePort } from '../../deploy/local/src/local-ports';
import { CODEC_8, encodeAvlData, framePacket, imeiHandshake, type RecordToEncode } from '../../services/teltonika/src/codec';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { closeKafka, committedOffsets, groupLag, messagesIn } from '../support/kafka';
import { closeDb, db, postJson, signToken, uniqueDeviceImei } from '../support/harness';
import { spawnService, stopAllServices, type ServiceProcess } from '../support/processes';
import { expectOneReplyPerDelivery, recordFigures, replyCounts } from './fault-audit';
import { type ProcessStack } from '../support/process-stack';
import { metricValue } from './fault-support';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { eventually } from '../support/eventually';
import { startStack } from '../support/stack';

const DEVICES = 12;
const RECORDS_PER_PACKET = 10;
/** How long a device waits for an acknowledgement before it reconnects and sends the packet again. */
const ACK_TIMEOUT_MS = 15_000;

let stack: ProcessStack;
let listener: ServiceProcess;
let devicePort: number;
/** Ends the devices' loops, also when the test fails midway. */
let stopping = false;

beforeAll(async () => {
  stack = await startStack({ mode: 'processes', label: 'teltonika-crash', deployedDefaults: true });
  devicePort = await freePort();
  listener = await spawnService('teltonika', { ...stack.env, TELTONIKA_PORT: String(devicePort), METRICS_PORT: '0' });
}, 90_000);
afterAll(async () => {
  stopping = true;
  await stopAllServices();
  await closeKafka();
  await closeDb();
});

/** The listener's packets of one outcome so far. */
async function packetsCounted(outcome: 'acknowledged' | 'failed' | 'refused'): Promise<number> {
  const text = await (await fetch(`${listener.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith('fleet_teltonika_packets_total{') && entry.includes(`outcome="${outcome}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** One connection's answer to what was sent: the bytes read, or undefined once it closed or timed out. */
function exchange(socket: net.Socket, bytes: Buffer, length: number, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const done = (value: Buffer | undefined) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= length) done(received.subarray(0, length));
    };
    const onClose = () => done(undefined);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(bytes);
  });
}

interface DeviceRun {
  imei: string;
  records: number;
  acknowledged: number;
  /** Packets sent more than once because no acknowledgement came. */
  resent: number;
  /** When the packet now waiting for its acknowledgement was first sent; undefined when none waits. */
  waitingSince: number | undefined;
}

/** A device reporting packet after packet until told to stop; an unacknowledged packet is sent again. */
async function runDevice(run: DeviceRun, stop: () => boolean): Promise<void> {
  let clock = Date.now() - 3_600_000;
  let socket: net.Socket | undefined;
  while (!stop()) {
    const records: RecordToEncode[] = Array.from({ length: RECORDS_PER_PACKET }, () => ({
      timestamp: (clock += 1000),
      priority: 1,
      longitude: 24.1,
      latitude: 56.9,
      altitude: 10,
      angle: 90,
      satellites: 9,
      speed: 40,
      eventIoId: 0,
      io: { 1: { 239: 1 } },
    }));
    const packet = framePacket(encodeAvlData(CODEC_8, records));
    run.waitingSince = Date.now();
    for (let attempt = 0; ; attempt += 1) {
      if (!socket || socket.destroyed) {
        socket = net.connect(devicePort, '127.0.0.1');
        socket.on('error', () => undefined);
        const accepted = await exchange(socket, imeiHandshake(run.imei), 1, ACK_TIMEOUT_MS);
        if (accepted?.[0] !== 1) {
          socket.destroy();
          // No listener to take the packet once the test is over (or has failed): the device gives up,
          // rather than keep the test process alive reconnecting.
          if (stop()) return;
          continue;
        }
      }
      const ack = await exchange(socket, packet, 4, ACK_TIMEOUT_MS);
      if (ack?.readUInt32BE(0) === RECORDS_PER_PACKET) break;
      socket.destroy();
      if (attempt === 0) run.resent += 1;
    }
    run.waitingSince = undefined;
    run.acknowledged += 1;
    run.records += RECORDS_PER_PACKET;
  }
  socket?.destroy();
}

test('a trip-writer killed while packets wait for their acknowledgement: every record of every packet stored exactly once', async () => {
  const authorization = `Bearer ${await signToken()}`;
  const runs: DeviceRun[] = [];
  for (let index = 0; index < DEVICES; index += 1) {
    const imei = uniqueDeviceImei();
    const res = await postJson(`${stack.gateway.url}${DEVICES_PATH}`, { imei }, { authorization });
    expect(res.status).toBe(200);
    runs.push({ imei, records: 0, acknowledged: 0, resent: 0, waitingSince: undefined });
  }
  const devices = runs.map((run) => runDevice(run, () => stopping));
  const acknowledged = () => runs.reduce((sum, run) => sum + run.acknowledged, 0);
  await eventually(() => acknowledged() >= 3 * DEVICES, 60_000, { what: 'every device to have packets acknowledged', intervalMs: 50 });

  // The writer is frozen before the kill, at whatever point of its work it has reached, so that the kill
  // lands with packets waiting: killed at once, it could die just after replying to every packet sent.
  // A frozen writer replies to nothing, so a packet waiting half a second is one it never acknowledged.
  const [killed] = stack.writers.splice(0, 1);
  killed!.kill('SIGSTOP');
  const waitingLong = () => runs.filter((run) => run.waitingSince !== undefined && Date.now() - run.waitingSince >= 500);
  await eventually(() => waitingLong().length > 0, 10_000, {
    what: 'a packet to wait half a second for the frozen writer',
    intervalMs: 20,
  });
  killed!.kill('SIGKILL');
  const killedAt = Date.now();
  expect(await killed!.exited).toBe('SIGKILL');
  // The kill landed with packets waiting: sent before it, not acknowledged.
  expect(runs.filter((run) => run.waitingSince !== undefined && run.waitingSince <= killedAt).length).toBeGreaterThan(0);
  const acknowledgedAtKill = acknowledged();
  // What the killed writer left: the commands it committed (a packet each, every one sent once so far),
  // and the records stored for the devices, among them those of packets stored and not committed.
  const topics = topicsFor(stack.prefix);
  const groupId = `${stack.prefix}.trip-writer`;
  const committedAtKill = [...(await committedOffsets(groupId, topics.tripLocations)).values()].reduce((sum, offset) => sum + offset, 0);
  const storedRecords = async () =>
    Number(
      (
        await db().query<{ n: string }>('SELECT count(*) AS n FROM trip_locations WHERE imei = ANY($1::text[])', [
          runs.map((run) => run.imei),
        ])
      ).rows[0]!.n,
    );
  const storedAtKill = await storedRecords();
  expect(runs.reduce((sum, run) => sum + run.resent, 0)).toBe(0);
  // With no writer, the waiting packets' replies never come: the listener gives up on them at
  // REPLY_TIMEOUT_MS, unacknowledged, and their devices send them again. Only then is a writer back.
  await eventually(async () => (await packetsCounted('failed')) > 0, 60_000, {
    what: 'the listener to give up on a packet, unacknowledged',
    intervalMs: 200,
  });

  const successor = await stack.addWriter();
  await eventually(() => acknowledged() >= acknowledgedAtKill + 3 * DEVICES, 90_000, {
    what: 'packets acknowledged again after the restart',
    intervalMs: 100,
  });
  stopping = true;
  await Promise.all(devices);
  await eventually(async () => (await groupLag(groupId, topics.tripLocations)) === 0, 60_000, {
    what: 'the successor to commit the whole topic',
    intervalMs: 200,
  });

  const rows = await db().query<{ imei: string; n: number; distinct_times: number }>(
    'SELECT imei, count(*)::int AS n, count(DISTINCT gps_time)::int AS distinct_times FROM trip_locations WHERE imei = ANY($1::text[]) GROUP BY imei',
    [runs.map((run) => run.imei)],
  );
  const stored = new Map(rows.rows.map((row) => [row.imei, row]));
  for (const run of runs) {
    expect({ imei: run.imei, stored: stored.get(run.imei)?.n ?? 0 }).toEqual({ imei: run.imei, stored: run.records });
  }
  // Packets were sent again, and each resent record was found stored by the writer that took over: the
  // first sending, left in Kafka by the killed writer, was stored before its resend arrived.
  const resent = runs.reduce((sum, run) => sum + run.resent, 0);
  expect(resent).toBeGreaterThan(0);
  // Every record handed to the successor was stored by it or counted as found stored already: the
  // resendings, and the packets the killed writer stored without committing.
  const handedOver = (await messagesIn(topics.tripLocations)) - committedAtKill;
  const storedBySuccessor = (await storedRecords()) - storedAtKill;
  const duplicates = await metricValue(successor, 'fleet_writer_duplicates_skipped_total');
  expect(duplicates).toBe(handedOver * RECORDS_PER_PACKET - storedBySuccessor);
  expect(duplicates).toBeGreaterThanOrEqual(resent * RECORDS_PER_PACKET);
  // Each redelivered packet is RECORDS_PER_PACKET of the duplicates that are not resendings.
  const replies = await replyCounts(topics.tripLocations, topics.replies);
  expectOneReplyPerDelivery(replies, (duplicates - resent * RECORDS_PER_PACKET) / RECORDS_PER_PACKET);
  const packets = runs.reduce((sum, run) => sum + run.acknowledged, 0);
  const records = runs.reduce((sum, run) => sum + run.records, 0);
  recordFigures({
    row: 'o',
    fault: `trip-writer SIGKILLed while ${DEVICES} Teltonika devices wait for their acknowledgements; the devices resend`,
    sent: `${packets} packets of ${RECORDS_PER_PACKET}`,
    ok: '–',
    unavailable: `${resent} resent`,
    rows: [...stored.values()].reduce((sum, row) => sum + row.n, 0),
    duplicates: [...stored.values()].reduce((sum, row) => sum + row.n - row.distinct_times, 0),
    recover: '–',
    figures: { packets, records, resent, givenUpByListener: await packetsCounted('failed'), duplicatesSkipped: duplicates, replies },
  });
  expect(records).toBe(packets * RECORDS_PER_PACKET);
}, 240_000);

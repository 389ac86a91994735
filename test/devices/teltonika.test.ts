// The Teltonika listener over real TCP sockets, as a device speaks to it: the IMEI handshake, AVL
// packets of Codec 8 and 8 Extended (Teltonika's published examples and packets built like them), each
// acknowledged with its record count only once its records are committed, which is checked by reading
// the rows as soon as the acknowledgement arrives.
import net from 'node:net';
import { freePort } from '../../deploy/local/src/local-ports';
import { CODEC_8, CODEC_8E, encodeAvlData, framePacket, imeiHandshake, type RecordToEncode } from '../../services/teltonika/src/codec';
import { teltonikaConfig } from '../../services/teltonika/src/config';
import { startTeltonika, type TeltonikaListener } from '../../services/teltonika/src/start';
import { eventually } from '../support/eventually';
import { closeKafka, messagesIn } from '../support/kafka';
import { scrape } from '../support/scrape';
import { TeltonikaDevice as Device } from '../support/teltonika-device';
import { runDevicesCli } from '../../services/gateway/src/cli/devices';
import { closeDb, db, postJson, signToken, testServers, uniqueDeviceImei, type Stack } from '../support/harness';
import { DEVICES_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

let stack: Stack;
let listener: TeltonikaListener;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'teltonika' });
  listener = await startTeltonika(teltonikaConfig({ ...stack.env, TELTONIKA_PORT: String(await freePort()), METRICS_PORT: '0' }));
});
afterAll(async () => {
  await listener?.stop();
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function registered(): Promise<string> {
  const imei = uniqueDeviceImei();
  const res = await postJson(`${stack.url}${DEVICES_PATH}`, { imei }, { authorization: `Bearer ${await signToken()}` });
  if (res.status !== 200) throw new Error(`registering ${imei} answered ${res.status}`);
  return imei;
}

let clock = Date.now() - 3_600_000;
/** A record a second after the last one built, at a place and speed of its own. */
function record(overrides: Partial<RecordToEncode> = {}): RecordToEncode {
  clock += 1000;
  return {
    timestamp: clock,
    priority: 1,
    longitude: 106.8456123,
    latitude: -6.2087634,
    altitude: 42,
    angle: 215,
    satellites: 12,
    speed: 63,
    eventIoId: 0,
    io: { 1: { 239: 1, 21: 4 }, 2: { 66: 12_850 }, 4: { 16: 1_234_567 } },
    ...overrides,
  };
}

async function rowsOf(imei: string) {
  return (await db().query('SELECT * FROM trip_locations WHERE imei = $1 ORDER BY gps_time', [imei])).rows;
}

describe('the session', () => {
  test('a registered IMEI is answered 01; an unregistered one 00, and the connection is closed', async () => {
    const known = new Device(listener.port);
    expect(await known.handshake(await registered())).toBe(0x01);
    known.end();

    const stranger = new Device(listener.port);
    expect(await stranger.handshake(uniqueDeviceImei())).toBe(0x00);
    await stranger.closed;
  });

  test('a Codec 8 packet of 10 records is acknowledged with 10 once all are stored, each field mapped', async () => {
    const imei = await registered();
    const device = new Device(listener.port);
    await device.handshake(imei);
    const records = Array.from({ length: 10 }, (_, i) => record({ speed: 50 + i }));

    expect(await device.packet(framePacket(encodeAvlData(CODEC_8, records)))).toBe(10);

    const rows = await rowsOf(imei);
    expect(rows.map((row) => row.speed)).toEqual(records.map((r) => r.speed));
    expect(rows[0]).toMatchObject({ latitude: -6.2087634, longitude: 106.8456123, angle: 215, satellite: 12, ignition: true });
    expect(rows[0].gps_time.getTime()).toBe(records[0]!.timestamp);
    expect(rows[0].attributes).toEqual({ altitude: 42, priority: 1, '239': 1, '21': 4, '66': 12_850, '16': 1_234_567 });
    device.end();
  });

  test('Codec 8 Extended: two-byte ids and variable-length values; without IO 239 the ignition is unknown', async () => {
    const imei = await registered();
    const device = new Device(listener.port);
    await device.handshake(imei);
    const one = record({ eventIoId: 385, io: { 2: { 24: 70 }, x: { 385: '0102a0ff' } } });

    expect(await device.packet(framePacket(encodeAvlData(CODEC_8E, [one])))).toBe(1);
    const [row] = await rowsOf(imei);
    expect(row).toMatchObject({ ignition: null, attributes: { altitude: 42, priority: 1, eventIo: 385, '24': 70, '385': '0102a0ff' } });
    device.end();
  });

  test('the handshake and packets split into single bytes, and two packets in one write, are each acknowledged', async () => {
    const imei = await registered();
    const device = new Device(listener.port);
    for (const byte of imeiHandshake(imei)) device.send(Buffer.from([byte]));
    expect((await device.read(1))[0]).toBe(1);
    const first = framePacket(encodeAvlData(CODEC_8, [record(), record()]));
    for (const byte of first) device.send(Buffer.from([byte]));
    expect((await device.read(4)).readUInt32BE(0)).toBe(2);

    device.send(
      Buffer.concat([
        framePacket(encodeAvlData(CODEC_8, [record()])),
        framePacket(encodeAvlData(CODEC_8E, [record(), record(), record()])),
      ]),
    );
    expect((await device.read(4)).readUInt32BE(0)).toBe(1);
    expect((await device.read(4)).readUInt32BE(0)).toBe(3);
    expect(await rowsOf(imei)).toHaveLength(6);
    device.end();
  });

  test('a packet sent again after a lost acknowledgement is acknowledged again and stored once', async () => {
    const imei = await registered();
    const packet = framePacket(encodeAvlData(CODEC_8, [record(), record(), record()]));
    const first = new Device(listener.port);
    await first.handshake(imei);
    first.send(packet);
    // The records are committed, but the device goes before it reads the acknowledgement; it comes back
    // and sends the packet again, as a device that heard nothing does.
    await eventually(async () => (await rowsOf(imei)).length === 3, 10_000, { what: 'the first sending to be stored' });
    first.end();
    const again = new Device(listener.port);
    await again.handshake(imei);

    expect(await again.packet(packet)).toBe(3);
    expect(await rowsOf(imei)).toHaveLength(3);
    again.end();
  });

  test('records outside the limits (the published example, from 2019) are acknowledged with their packet and dropped', async () => {
    const imei = await registered();
    const device = new Device(listener.port);
    await device.handshake(imei);
    const example = Buffer.from(
      '000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01F10000601A014E0000000000000000010000C7CF',
      'hex',
    );
    const metrics = `http://127.0.0.1:${listener.metricsPort}/metrics`;
    const before = (await scrape(metrics)).value('fleet_teltonika_records_total', { outcome: 'dropped' }) ?? 0;

    expect(await device.packet(example)).toBe(1);
    expect(await rowsOf(imei)).toHaveLength(0);
    expect((await scrape(metrics)).value('fleet_teltonika_records_total', { outcome: 'dropped' })).toBe(before + 1);
    device.end();
  });
});

describe('a device removed or re-keyed while connected', () => {
  /** Sends a packet a second until one is not acknowledged; answers how many were. */
  async function acknowledgedUntilClosed(device: Device): Promise<number> {
    let acknowledged = 0;
    await eventually(
      async () => {
        if ((await device.packet(framePacket(encodeAvlData(CODEC_8, [record()])))) === undefined) return true;
        acknowledged += 1;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return false;
      },
      45_000,
      { what: 'the session closed without an acknowledgement' },
    );
    return acknowledged;
  }

  test('has its open session closed, unacknowledged, within the registry cache time; the other devices are served', async () => {
    const cli = (...args: string[]) =>
      runDevicesCli(args, { env: { DATABASE_URL: testServers().databaseUrl }, out: () => undefined, err: () => undefined });
    const [removed, rekeyed, kept] = [await registered(), await registered(), await registered()];
    const devices = [new Device(listener.port), new Device(listener.port), new Device(listener.port)];
    await Promise.all(devices.map((device, i) => device.handshake([removed, rekeyed, kept][i]!)));
    expect(await devices[0]!.packet(framePacket(encodeAvlData(CODEC_8, [record()])))).toBe(1);

    expect(await cli('remove', removed)).toBe(0);
    expect(await cli('rotate-key', rekeyed)).toBe(0);
    const [acknowledgedRemoved] = await Promise.all([acknowledgedUntilClosed(devices[0]!), acknowledgedUntilClosed(devices[1]!)]);
    await devices[0]!.closed;
    await devices[1]!.closed;

    // Each acknowledged packet is stored, and the one refused is not.
    expect(await rowsOf(removed)).toHaveLength(1 + acknowledgedRemoved);
    expect(await devices[2]!.packet(framePacket(encodeAvlData(CODEC_8, [record()])))).toBe(1);
    // The re-keyed device is still registered: it is accepted again on its next handshake.
    const again = new Device(listener.port);
    expect(await again.handshake(rekeyed)).toBe(0x01);
    again.end();
    devices[2]!.end();
  });
});

describe('refused packets', () => {
  test('a CRC that does not match gets no acknowledgement and stores nothing, the connection closes, and other devices are served', async () => {
    const [imei, other] = [await registered(), await registered()];
    const bystander = new Device(listener.port);
    await bystander.handshake(other);
    const device = new Device(listener.port);
    await device.handshake(imei);
    const damaged = framePacket(encodeAvlData(CODEC_8, [record(), record()]));
    damaged.writeUInt16BE(damaged.readUInt16BE(damaged.length - 2) ^ 0xffff, damaged.length - 2);

    expect(await device.packet(damaged)).toBeUndefined();
    await device.closed;
    expect(await rowsOf(imei)).toHaveLength(0);
    expect(await bystander.packet(framePacket(encodeAvlData(CODEC_8, [record()])))).toBe(1);
    bystander.end();
  });

  test('a packet of another codec, or a stream that is not Teltonika’s, is not acknowledged and closes the connection', async () => {
    const imei = await registered();
    const device = new Device(listener.port);
    await device.handshake(imei);
    const data = encodeAvlData(CODEC_8, [record()]);
    data.writeUInt8(0x0c, 0);

    expect(await device.packet(framePacket(data))).toBeUndefined();
    const http = new Device(listener.port);
    http.send(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await http.closed;
    expect(await rowsOf(imei)).toHaveLength(0);
  });

  test('counts connections, packets, records, acknowledgements and refusals on /metrics, and is ready', async () => {
    const base = `http://127.0.0.1:${listener.metricsPort}`;
    const metrics = await scrape(`${base}/metrics`);
    expect(metrics.value('fleet_teltonika_packets_total', { outcome: 'acknowledged' })).toBeGreaterThan(0);
    expect(metrics.value('fleet_teltonika_acknowledgements_total')).toBeGreaterThan(0);
    expect(metrics.value('fleet_teltonika_records_total', { outcome: 'stored' })).toBeGreaterThan(0);
    expect(metrics.value('fleet_teltonika_refusals_total', { reason: 'crc' })).toBeGreaterThan(0);
    expect(metrics.value('fleet_teltonika_refusals_total', { reason: 'unregistered' })).toBeGreaterThan(0);
    expect(metrics.value('fleet_teltonika_connections')).toBeGreaterThanOrEqual(0);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
  });
});

describe('connections that hold resources', () => {
  let strict: TeltonikaListener;
  beforeAll(async () => {
    strict = await startTeltonika(
      teltonikaConfig({
        ...stack.env,
        TELTONIKA_PORT: String(await freePort()),
        METRICS_PORT: '0',
        TELTONIKA_MAX_CONNECTIONS: '2',
        TELTONIKA_HANDSHAKE_TIMEOUT_MS: '300',
        TELTONIKA_IDLE_TIMEOUT_MS: '600',
      }),
    );
  });
  afterAll(async () => {
    await strict?.stop();
  });

  const connect = () => new Device(strict.port);

  test('a connection that never sends its IMEI, and one silent after it, are closed and counted', async () => {
    const silent = connect();
    const idle = connect();
    expect(await idle.handshake(await registered())).toBe(1);

    await Promise.all([silent.closed, idle.closed]);
    const metrics = await scrape(`http://127.0.0.1:${strict.metricsPort}/metrics`);
    expect(metrics.value('fleet_teltonika_refusals_total', { reason: 'handshake-timeout' })).toBeGreaterThanOrEqual(1);
    expect(metrics.value('fleet_teltonika_refusals_total', { reason: 'idle' })).toBeGreaterThanOrEqual(1);
  });

  test('past TELTONIKA_MAX_CONNECTIONS a new connection is closed at once, and those within it are served', async () => {
    const imeis = [await registered(), await registered()];
    const held = [connect(), connect()];
    for (const [index, device] of held.entries()) expect(await device.handshake(imeis[index]!)).toBe(1);
    const extra = connect();
    await extra.closed;

    expect(await held[0]!.packet(framePacket(encodeAvlData(CODEC_8, [record()])))).toBe(1);
    const metrics = await scrape(`http://127.0.0.1:${strict.metricsPort}/metrics`);
    expect(metrics.value('fleet_teltonika_refusals_total', { reason: 'capacity' })).toBeGreaterThanOrEqual(1);
    for (const device of held) device.end();
  });
});

describe('backpressure', () => {
  let stalled: Stack;
  let slow: TeltonikaListener;
  beforeAll(async () => {
    // No trip-writer: the first packet's reply never comes, as when Kafka or the writers are slow.
    stalled = await startStack({ mode: 'in-process', label: 'teltonika-stalled', tripWriters: 0, env: { REPLY_TIMEOUT_MS: '30000' } });
    slow = await startTeltonika(teltonikaConfig({ ...stalled.env, TELTONIKA_PORT: String(await freePort()), METRICS_PORT: '0' }));
  });
  afterAll(async () => {
    await slow?.stop();
    await stalled?.stop();
  });

  test('while a packet waits to be stored, the listener reads nothing more: the device’s bytes wait on its side, and one packet is published', async () => {
    const imei = await registered();
    const socket = net.connect(slow.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const accepted = new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.write(imeiHandshake(imei));
    expect((await accepted)[0]).toBe(1);
    const topic = `${stalled.prefix}.trip-locations`;
    const packet = framePacket(
      encodeAvlData(
        CODEC_8E,
        Array.from({ length: 50 }, () => record()),
      ),
    );

    // Far more than the kernel's socket buffers hold between the two ends (a few MiB on loopback).
    let sent = 0;
    while (socket.writableLength < 32 * 2 ** 20) {
      socket.write(packet);
      sent += 1;
    }
    await eventually(async () => (await messagesIn(topic)) === 1, 10_000, { what: 'the first packet to be published' });

    // The listener took the first packet and stopped reading: the rest wait in the device's own buffer.
    expect(socket.writableLength).toBeGreaterThan(16 * 2 ** 20);
    expect(await messagesIn(topic)).toBe(1);
    expect(sent).toBeGreaterThan(100);
    socket.destroy();
  });
});

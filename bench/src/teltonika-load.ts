// The bench's Teltonika devices: each connection opens a session with its IMEI, then sends packets of
// Codec 8 records one after the other, each once the last is acknowledged, as a tracker emptying its
// buffer does. Counts acknowledged packets and their latency; a packet not acknowledged is an error.
import net from 'node:net';
import { CODEC_8, encodeAvlData, framePacket, imeiHandshake, type RecordToEncode } from '@fleet/teltonika/codec';

export interface TeltonikaLoadResult {
  packets: number;
  errors: number;
  /** Milliseconds from a packet's sending to its acknowledgement, sorted. */
  latencies: number[];
}

/** Resolves with the next `length` bytes the socket receives, or undefined if it closes first. */
function reply(socket: net.Socket, length: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= length) finish(received.subarray(0, length));
    };
    const onClose = () => finish(undefined);
    const finish = (value: Buffer | undefined) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(value);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

async function connect(port: number, imei: string): Promise<net.Socket | undefined> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  const accepted = reply(socket, 1);
  socket.write(imeiHandshake(imei));
  if ((await accepted)?.[0] === 1) return socket;
  socket.destroy();
  return undefined;
}

/** Runs one connection per IMEI for `seconds`, packets of `recordsPerPacket` records. */
export async function teltonikaLoad(
  port: number,
  imeis: readonly string[],
  seconds: number,
  recordsPerPacket: number,
): Promise<TeltonikaLoadResult> {
  const result: TeltonikaLoadResult = { packets: 0, errors: 0, latencies: [] };
  const deadline = Date.now() + seconds * 1000;
  // Every record of the run is new: times step a second at a time, from an hour ago, per device.
  const start = Date.now() - 3_600_000;
  await Promise.all(
    imeis.map(async (imei) => {
      let clock = start;
      let socket = await connect(port, imei);
      while (Date.now() < deadline) {
        if (!socket) {
          result.errors += 1;
          socket = await connect(port, imei);
          continue;
        }
        const records: RecordToEncode[] = Array.from({ length: recordsPerPacket }, (_, index) => ({
          timestamp: (clock += 1000),
          priority: 0,
          longitude: 24.105078,
          latitude: 56.946285 + index / 1e5,
          altitude: 12,
          angle: 180,
          satellites: 10,
          speed: 54,
          eventIoId: 0,
          io: { 1: { 239: 1, 21: 5 }, 2: { 66: 12_800 } },
        }));
        const ack = reply(socket, 4);
        const sentAt = performance.now();
        socket.write(framePacket(encodeAvlData(CODEC_8, records)));
        const answer = await ack;
        if (answer?.readUInt32BE(0) === recordsPerPacket) {
          result.packets += 1;
          result.latencies.push(performance.now() - sentAt);
        } else {
          result.errors += 1;
          socket.destroy();
          socket = undefined;
        }
      }
      socket?.destroy();
    }),
  );
  result.latencies.sort((a, b) => a - b);
  return result;
}

/** The latency at quantile q of a sorted list, in whole milliseconds. */
export function quantileMs(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
}

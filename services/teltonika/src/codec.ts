// Teltonika's TCP protocol, as its public description gives it: a session opens with the device's IMEI
// (2-byte length, ASCII digits), then carries AVL packets, each
//   4 zero bytes | data length (4) | codec id (1) | record count (1) | records | record count (1) | CRC (4)
// where the CRC is CRC-16/IBM of the data (codec id to the second count), in the last two of its bytes.
// Codec 8 and Codec 8 Extended (0x8E) differ only in the width of IO ids and counts, and 8E's
// variable-length IO values. Everything here is pure: bytes in, records or a reason out.

export const CODEC_8 = 0x08;
export const CODEC_8E = 0x8e;
/** Larger than any packet a device sends (a full Codec 8E buffer is a few KiB): beyond it, the stream is not Teltonika's. */
export const MAX_DATA_LENGTH = 64 * 1024;
const MAX_IMEI_LENGTH = 17;

/** CRC-16/IBM (ARC): polynomial 0x8005 reflected (0xA001), initial value 0, as Teltonika computes it. */
export function crc16ibm(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

export type IoValue = number | string;

export interface AvlRecord {
  /** Milliseconds since the Unix epoch, UTC. */
  timestamp: number;
  priority: number;
  longitude: number;
  latitude: number;
  altitude: number;
  angle: number;
  satellites: number;
  /** km/h */
  speed: number;
  /** The IO element that caused the record, 0 when none. */
  eventIoId: number;
  /** Every IO element by its id: integers as numbers (as text beyond 2^53), variable-length values as hex. */
  io: Map<number, IoValue>;
}

export interface AvlPacket {
  codec: number;
  records: AvlRecord[];
}

export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(
    readonly reason: 'crc' | 'structure',
    message: string,
  ) {
    super(message);
  }
}

/** Reads big-endian fields off a buffer, failing as a structure error past its end. */
class Cursor {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}

  get offset(): number {
    return this.at;
  }

  private take(length: number): number {
    if (this.at + length > this.bytes.length) {
      throw new ProtocolError('structure', `the data ends at byte ${this.bytes.length}, ${length} more were expected at byte ${this.at}`);
    }
    const start = this.at;
    this.at += length;
    return start;
  }

  u8 = () => this.bytes.readUInt8(this.take(1));
  u16 = () => this.bytes.readUInt16BE(this.take(2));
  i16 = () => this.bytes.readInt16BE(this.take(2));
  u32 = () => this.bytes.readUInt32BE(this.take(4));
  i32 = () => this.bytes.readInt32BE(this.take(4));
  u64 = () => this.bytes.readBigUInt64BE(this.take(8));
  slice = (length: number) => this.bytes.subarray(this.take(length), this.at);
}

/** An 8-byte IO value: a number when it is exact as one, else its decimal text. */
function wide(value: bigint): IoValue {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

function readRecord(cursor: Cursor, codec: number): AvlRecord {
  const extended = codec === CODEC_8E;
  const id = extended ? cursor.u16 : cursor.u8;
  const count = extended ? cursor.u16 : cursor.u8;
  const timestamp = Number(cursor.u64());
  const priority = cursor.u8();
  const longitude = cursor.i32() / 1e7;
  const latitude = cursor.i32() / 1e7;
  const altitude = cursor.i16();
  const angle = cursor.u16();
  const satellites = cursor.u8();
  const speed = cursor.u16();
  const eventIoId = id();
  const total = count();
  const io = new Map<number, IoValue>();
  for (const [width, read] of [
    [1, cursor.u8],
    [2, cursor.u16],
    [4, cursor.u32],
    [8, () => wide(cursor.u64())],
  ] as const) {
    const elements = count();
    for (let index = 0; index < elements; index += 1) {
      const ioId = id();
      io.set(ioId, width === 8 ? read() : read());
    }
  }
  if (extended) {
    const elements = count();
    for (let index = 0; index < elements; index += 1) {
      const ioId = id();
      io.set(ioId, cursor.slice(cursor.u16()).toString('hex'));
    }
  }
  if (io.size > total) throw new ProtocolError('structure', `a record holds ${io.size} IO elements where it announces ${total}`);
  return { timestamp, priority, longitude, latitude, altitude, angle, satellites, speed, eventIoId, io };
}

/** Decodes a packet's data field (codec id to the second record count), which its CRC has covered. */
export function decodeAvlData(data: Buffer): AvlPacket {
  const cursor = new Cursor(data);
  const codec = cursor.u8();
  if (codec !== CODEC_8 && codec !== CODEC_8E) {
    throw new ProtocolError('structure', `codec 0x${codec.toString(16)} is neither Codec 8 (0x08) nor Codec 8 Extended (0x8e)`);
  }
  const count = cursor.u8();
  const records = Array.from({ length: count }, () => readRecord(cursor, codec));
  const countAgain = cursor.u8();
  if (countAgain !== count) throw new ProtocolError('structure', `the packet announces ${count} records, then ${countAgain}`);
  if (cursor.offset !== data.length) throw new ProtocolError('structure', `${data.length - cursor.offset} bytes follow the records`);
  if (count === 0) throw new ProtocolError('structure', 'the packet holds no record');
  return { codec, records };
}

export type Frame = { kind: 'packet'; packet: AvlPacket } | { kind: 'incomplete' };

/**
 * Reads the device's bytes as they arrive, however TCP splits or joins them: first the IMEI, then AVL
 * packets, each handed out whole and checked (CRC and structure) or refused with a ProtocolError.
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
  }

  get pending(): number {
    return this.buffered.length;
  }

  /** The IMEI once its bytes are all here, undefined before. */
  imei(): string | undefined {
    if (this.buffered.length < 2) return undefined;
    const length = this.buffered.readUInt16BE(0);
    if (length === 0 || length > MAX_IMEI_LENGTH) throw new ProtocolError('structure', `an IMEI of ${length} bytes`);
    if (this.buffered.length < 2 + length) return undefined;
    const imei = this.buffered.subarray(2, 2 + length).toString('latin1');
    if (!/^\d+$/.test(imei)) throw new ProtocolError('structure', 'the IMEI is not digits');
    this.buffered = this.buffered.subarray(2 + length);
    return imei;
  }

  /** The next whole packet, or incomplete until its last byte has arrived. */
  packet(): Frame {
    if (this.buffered.length < 8) return { kind: 'incomplete' };
    if (this.buffered.readUInt32BE(0) !== 0) throw new ProtocolError('structure', 'a packet does not start with its 4 zero bytes');
    const length = this.buffered.readUInt32BE(4);
    if (length < 3 || length > MAX_DATA_LENGTH) throw new ProtocolError('structure', `a data length of ${length} bytes`);
    if (this.buffered.length < 8 + length + 4) return { kind: 'incomplete' };
    const data = this.buffered.subarray(8, 8 + length);
    const crc = this.buffered.readUInt32BE(8 + length);
    this.buffered = this.buffered.subarray(8 + length + 4);
    const computed = crc16ibm(data);
    if (crc !== computed) {
      throw new ProtocolError('crc', `CRC 0x${crc.toString(16)} where the data gives 0x${computed.toString(16)}`);
    }
    return { kind: 'packet', packet: decodeAvlData(data) };
  }
}

/** Builds a packet around its data field, as a device sends it (tests and the bench's devices). */
export function framePacket(data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 4);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc16ibm(data));
  return Buffer.concat([head, data, crc]);
}

/** The IMEI as a device opens its session with it. */
export function imeiHandshake(imei: string): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(imei.length);
  return Buffer.concat([length, Buffer.from(imei, 'latin1')]);
}

/** A record as a device would encode it: IO values by width (8E's variable-length ones as hex). */
export interface RecordToEncode extends Omit<AvlRecord, 'io'> {
  io: {
    1?: Record<number, number>;
    2?: Record<number, number>;
    4?: Record<number, number>;
    8?: Record<number, bigint>;
    x?: Record<number, string>;
  };
}

/** Encodes a packet's data field as a device does (tests and the bench's devices). */
export function encodeAvlData(codec: typeof CODEC_8 | typeof CODEC_8E, records: readonly RecordToEncode[]): Buffer {
  const extended = codec === CODEC_8E;
  const parts: Buffer[] = [Buffer.from([codec, records.length])];
  const n = (value: number) => {
    const buffer = Buffer.alloc(extended ? 2 : 1);
    if (extended) buffer.writeUInt16BE(value);
    else buffer.writeUInt8(value);
    return buffer;
  };
  for (const record of records) {
    const head = Buffer.alloc(24);
    head.writeBigUInt64BE(BigInt(record.timestamp), 0);
    head.writeUInt8(record.priority, 8);
    head.writeInt32BE(Math.round(record.longitude * 1e7), 9);
    head.writeInt32BE(Math.round(record.latitude * 1e7), 13);
    head.writeInt16BE(record.altitude, 17);
    head.writeUInt16BE(record.angle, 19);
    head.writeUInt8(record.satellites, 21);
    head.writeUInt16BE(record.speed, 22);
    const groups = [
      [1, record.io[1] ?? {}],
      [2, record.io[2] ?? {}],
      [4, record.io[4] ?? {}],
      [8, record.io[8] ?? {}],
    ] as const;
    const variable = extended ? Object.entries(record.io.x ?? {}) : [];
    const total = groups.reduce((sum, [, values]) => sum + Object.keys(values).length, 0) + variable.length;
    parts.push(head, n(record.eventIoId), n(total));
    for (const [width, values] of groups) {
      parts.push(n(Object.keys(values).length));
      for (const [id, value] of Object.entries(values)) {
        const buffer = Buffer.alloc(width);
        if (width === 1) buffer.writeUInt8(value as number);
        else if (width === 2) buffer.writeUInt16BE(value as number);
        else if (width === 4) buffer.writeUInt32BE(value as number);
        else buffer.writeBigUInt64BE(value as bigint);
        parts.push(n(Number(id)), buffer);
      }
    }
    if (extended) {
      parts.push(n(variable.length));
      for (const [id, hex] of variable) {
        const value = Buffer.from(hex, 'hex');
        const length = Buffer.alloc(2);
        length.writeUInt16BE(value.length);
        parts.push(n(Number(id)), length, value);
      }
    }
  }
  parts.push(Buffer.from([records.length]));
  return Buffer.concat(parts);
}

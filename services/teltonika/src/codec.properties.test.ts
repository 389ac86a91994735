// Properties of the Teltonika reader over generated input, as a device or anything else on the port may
// send it: packets of any records, split by TCP anywhere, are read whole and as encoded; any other bytes,
// or a packet with any byte changed, are read or refused with a ProtocolError, never anything else (a
// RangeError out of a Buffer read would end the session as an internal failure, not a refusal).
import fc from 'fast-check';
import {
  CODEC_8,
  CODEC_8E,
  crc16ibm,
  decodeAvlData,
  encodeAvlData,
  FrameReader,
  framePacket,
  imeiHandshake,
  ProtocolError,
  type AvlPacket,
  type RecordToEncode,
} from './codec';

type Codec = typeof CODEC_8 | typeof CODEC_8E;

/** Distinct IO ids, dealt out to the value widths (a Map keeps one value per id). */
function ioOf(codec: Codec): fc.Arbitrary<RecordToEncode['io']> {
  const maxId = codec === CODEC_8E ? 0xffff : 0xff;
  return fc.uniqueArray(fc.integer({ min: 0, max: maxId }), { maxLength: 12 }).chain((ids) =>
    fc
      .tuple(
        fc.array(fc.integer({ min: 0, max: codec === CODEC_8E ? 4 : 3 }), { minLength: ids.length, maxLength: ids.length }),
        fc.array(fc.nat(), { minLength: ids.length, maxLength: ids.length }),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { minLength: ids.length, maxLength: ids.length }),
        fc.array(fc.uint8Array({ maxLength: 24 }), { minLength: ids.length, maxLength: ids.length }),
      )
      .map(([widths, numbers, wides, bytes]) => {
        const io: RecordToEncode['io'] = {};
        ids.forEach((id, index) => {
          const width = widths[index]!;
          if (width === 0) (io[1] ??= {})[id] = numbers[index]! % 0x100;
          else if (width === 1) (io[2] ??= {})[id] = numbers[index]! % 0x10000;
          else if (width === 2) (io[4] ??= {})[id] = numbers[index]!;
          else if (width === 3) (io[8] ??= {})[id] = wides[index]!;
          else (io.x ??= {})[id] = Buffer.from(bytes[index]!).toString('hex');
        });
        return io;
      }),
  );
}

function recordOf(codec: Codec): fc.Arbitrary<RecordToEncode> {
  return fc.record({
    timestamp: fc.integer({ min: 0, max: Date.parse('2100-01-01T00:00:00Z') }),
    priority: fc.integer({ min: 0, max: 2 }),
    // Whole units of 1e-7 degree, as the wire carries them.
    longitude: fc.integer({ min: -1_800_000_000, max: 1_800_000_000 }).map((units) => units / 1e7),
    latitude: fc.integer({ min: -900_000_000, max: 900_000_000 }).map((units) => units / 1e7),
    altitude: fc.integer({ min: -0x8000, max: 0x7fff }),
    angle: fc.integer({ min: 0, max: 0xffff }),
    satellites: fc.integer({ min: 0, max: 0xff }),
    speed: fc.integer({ min: 0, max: 0xffff }),
    eventIoId: fc.integer({ min: 0, max: codec === CODEC_8E ? 0xffff : 0xff }),
    io: ioOf(codec),
  });
}

const packetData = fc
  .constantFrom<Codec>(CODEC_8, CODEC_8E)
  .chain((codec) => fc.array(recordOf(codec), { minLength: 1, maxLength: 4 }).map((records) => encodeAvlData(codec, records)));

/** The bytes cut into chunks at the given points, as TCP may deliver them. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    if (point > from) chunks.push(bytes.subarray(from, point));
    from = point;
  }
  return chunks;
}

/** Feeds the chunks to a reader as a session does: the IMEI first, then every packet whole. */
function readAll(chunks: Buffer[]): { imei?: string; packets: AvlPacket[]; pending: number } {
  const reader = new FrameReader();
  let imei: string | undefined;
  const packets: AvlPacket[] = [];
  for (const chunk of chunks) {
    reader.push(chunk);
    for (;;) {
      if (imei === undefined) {
        imei = reader.imei();
        if (imei === undefined) break;
        continue;
      }
      const frame = reader.packet();
      if (frame.kind === 'incomplete') break;
      packets.push(frame.packet);
    }
  }
  return { imei, packets, pending: reader.pending };
}

/** Runs `read`, letting only a ProtocolError through. */
function readOrRefuse(read: () => unknown): void {
  try {
    read();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
  }
}

describe('the Teltonika reader, over generated input', () => {
  test('packets of any records, split anywhere, are each read whole and as they were encoded', () => {
    fc.assert(
      fc.property(fc.array(packetData, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 8 }), (datas, cuts) => {
        const stream = Buffer.concat([imeiHandshake('356307042441013'), ...datas.map(framePacket)]);
        const read = readAll(chunked(stream, cuts));
        expect(read.imei).toBe('356307042441013');
        expect(read.packets).toEqual(datas.map(decodeAvlData));
        expect(read.pending).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  test('any bytes after the IMEI, in any chunks, are read or refused with a ProtocolError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 6 }), (bytes, cuts) => {
        const stream = Buffer.concat([imeiHandshake('356307042441013'), Buffer.from(bytes)]);
        readOrRefuse(() => readAll(chunked(stream, cuts)));
      }),
      { numRuns: 2000 },
    );
  });

  test('a packet with any byte changed, its CRC made to fit or not, is read or refused with a ProtocolError', () => {
    fc.assert(
      fc.property(packetData, fc.nat(), fc.integer({ min: 1, max: 0xff }), fc.boolean(), (data, at, change, refit) => {
        const packet = framePacket(data);
        const index = at % packet.length;
        packet.writeUInt8(packet.readUInt8(index) ^ change, index);
        // Refitting the CRC to the changed data lets the change reach the structure checks.
        if (refit && index >= 8 && index < packet.length - 4) packet.writeUInt32BE(crc16ibm(packet.subarray(8, -4)), packet.length - 4);
        readOrRefuse(() => readAll([imeiHandshake('356307042441013'), packet]));
      }),
      { numRuns: 2000 },
    );
  });

  test('any data field of a packet is decoded or refused with a ProtocolError', () => {
    fc.assert(
      fc.property(fc.constantFrom(CODEC_8, CODEC_8E), fc.uint8Array({ maxLength: 120 }), (codec, rest) => {
        readOrRefuse(() => decodeAvlData(Buffer.concat([Buffer.from([codec, 1]), Buffer.from(rest)])));
      }),
      { numRuns: 2000 },
    );
  });
});

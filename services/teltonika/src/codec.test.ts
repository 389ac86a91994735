import { CODEC_8, CODEC_8E, crc16ibm, decodeAvlData, encodeAvlData, FrameReader, framePacket, imeiHandshake, ProtocolError } from './codec';

// The two example packets of Teltonika's public protocol description, byte for byte.
const CODEC_8_EXAMPLE =
  '000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01F10000601A014E0000000000000000010000C7CF';
const CODEC_8E_EXAMPLE =
  '000000000000004A8E010000016B412CEE000100000000000000000000000000000000010005000100010100010011001D00010010015E2C880002000B000000003544C87A000E000000001DD7E06A00000100002994';

function packetOf(hex: string) {
  const reader = new FrameReader();
  reader.push(Buffer.from(hex, 'hex'));
  const frame = reader.packet();
  if (frame.kind !== 'packet') throw new Error('incomplete');
  return frame.packet;
}

describe('Teltonika codecs', () => {
  test('CRC-16/IBM of the published examples is the CRC they carry', () => {
    const data = Buffer.from(CODEC_8_EXAMPLE, 'hex').subarray(8, -4);
    expect(crc16ibm(data)).toBe(0xc7cf);
    expect(crc16ibm(Buffer.from('123456789'))).toBe(0xbb3d);
  });

  test('reads the Codec 8 example: one record, its time, and its IO elements by id', () => {
    expect(packetOf(CODEC_8_EXAMPLE)).toEqual({
      codec: CODEC_8,
      records: [
        expect.objectContaining({
          timestamp: Date.parse('2019-06-10T10:04:46.000Z'),
          priority: 1,
          eventIoId: 1,
          io: new Map([
            [21, 3],
            [1, 1],
            [66, 24079],
            [241, 24602],
            [78, 0],
          ]),
        }),
      ],
    });
  });

  test('reads the Codec 8 Extended example, with two-byte ids and an eight-byte value', () => {
    const packet = packetOf(CODEC_8E_EXAMPLE);
    expect(packet.codec).toBe(CODEC_8E);
    expect(packet.records[0]!.io).toEqual(
      new Map([
        [1, 1],
        [17, 29],
        [16, 22949000],
        [11, 893700218],
        [14, 500686954],
      ]),
    );
  });

  test('what the encoder writes, the reader reads back, for both codecs, variable-length values included', () => {
    const record = {
      timestamp: Date.parse('2026-11-26T10:00:00.125Z'),
      priority: 0,
      longitude: 13.404954,
      latitude: -52.520008,
      altitude: -12,
      angle: 359,
      satellites: 11,
      speed: 87,
      eventIoId: 239,
      io: { 1: { 239: 1 }, 2: { 66: 12_345 }, 4: { 16: 4_000_000 }, 8: { 11: 2n ** 60n } },
    };
    for (const codec of [CODEC_8, CODEC_8E] as const) {
      const io = codec === CODEC_8E ? { ...record.io, x: { 385: 'deadbeef' } } : record.io;
      const [read] = decodeAvlData(encodeAvlData(codec, [{ ...record, io }])).records;
      expect(read).toEqual({
        ...record,
        io: new Map<number, number | string>([
          [239, 1],
          [66, 12_345],
          [16, 4_000_000],
          [11, (2n ** 60n).toString()],
          ...(codec === CODEC_8E ? ([[385, 'deadbeef']] as const) : []),
        ]),
      });
    }
  });

  test('a packet split into single bytes, or two packets in one read, are each read whole', () => {
    const packet = framePacket(Buffer.from(CODEC_8_EXAMPLE, 'hex').subarray(8, -4));
    const reader = new FrameReader();
    reader.push(imeiHandshake('356307042441013'));
    expect(reader.imei()).toBe('356307042441013');
    for (const byte of packet.subarray(0, -1)) {
      reader.push(Buffer.from([byte]));
      expect(reader.packet()).toEqual({ kind: 'incomplete' });
    }
    reader.push(Buffer.concat([packet.subarray(-1), packet]));
    expect(reader.packet().kind).toBe('packet');
    expect(reader.packet().kind).toBe('packet');
    expect(reader.pending).toBe(0);
  });

  test.each([
    ['a wrong CRC', (bytes: Buffer) => bytes.writeUInt16BE(0xc7ce, bytes.length - 2), 'crc'],
    ['counts that disagree', (bytes: Buffer) => bytes.writeUInt8(2, bytes.length - 5), 'structure'],
    ['an unknown codec', (bytes: Buffer) => bytes.writeUInt8(0x10, 8), 'structure'],
    ['a preamble that is not zeros', (bytes: Buffer) => bytes.writeUInt8(1, 0), 'structure'],
  ])('%s is refused as %s', (_case, damage, reason) => {
    const bytes = Buffer.from(CODEC_8_EXAMPLE, 'hex');
    damage(bytes);
    // The counts and the codec are inside the CRC: recomputed, so that the structure check is reached.
    if (reason === 'structure' && bytes.readUInt8(0) === 0) bytes.writeUInt16BE(crc16ibm(bytes.subarray(8, -4)), bytes.length - 2);
    const reader = new FrameReader();
    reader.push(bytes);
    expect(() => reader.packet()).toThrow(expect.objectContaining({ reason }) as ProtocolError);
  });
});

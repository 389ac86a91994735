import type { KafkaMessage } from 'kafkajs';
import { z } from 'zod';
import { decodeBatch } from './batch-decoder';

const schema = z.object({ imei: z.string().min(1), speed: z.number() });

function message(offset: string, value: string | null): KafkaMessage {
  return {
    offset,
    value: value === null ? null : Buffer.from(value),
    key: null,
    timestamp: '0',
    attributes: 0,
    headers: {},
  } as KafkaMessage;
}

describe('decodeBatch', () => {
  it('decodes every valid message, in order, with the message it came from', () => {
    const batch = [message('1', '{"imei":"a","speed":1}'), message('2', '{"imei":"b","speed":2}')];

    const { decoded, undecodable } = decodeBatch(schema, batch);

    expect(decoded.map((entry) => entry.command)).toEqual([
      { imei: 'a', speed: 1 },
      { imei: 'b', speed: 2 },
    ]);
    expect(decoded.map((entry) => entry.message.offset)).toEqual(['1', '2']);
    expect(undecodable).toEqual([]);
  });

  it('sets aside an empty message, one that is not JSON and one failing the schema, each with its reason', () => {
    const batch = [
      message('1', null),
      message('2', '{"imei":'),
      message('3', '{"imei":"a","speed":1}'),
      message('4', '{"imei":"","speed":1}'),
      message('5', '[]'),
    ];

    const { decoded, undecodable } = decodeBatch(schema, batch);

    expect(decoded.map((entry) => entry.message.offset)).toEqual(['3']);
    expect(undecodable.map(({ message: m, reason }) => [m.offset, reason])).toEqual([
      ['1', 'empty message'],
      ['2', expect.stringMatching(/^not JSON: /)],
      ['4', expect.stringMatching(/^invalid command: imei: /)],
      ['5', expect.stringMatching(/^invalid command: \(root\): /)],
    ]);
  });
});

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

    expect(decoded.map((entry) => entry.commands)).toEqual([[{ imei: 'a', speed: 1 }], [{ imei: 'b', speed: 2 }]]);
    expect(decoded.map((entry) => entry.list)).toEqual([false, false]);
    expect(decoded.map((entry) => entry.message.offset)).toEqual(['1', '2']);
    expect(undecodable).toEqual([]);
  });

  it('decodes a message holding a list of commands into those commands, in the order of the list', () => {
    const batch = [message('1', '[{"imei":"a","speed":1},{"imei":"a","speed":2}]'), message('2', '{"imei":"b","speed":3}')];

    const { decoded, undecodable } = decodeBatch(schema, batch);

    expect(decoded).toEqual([
      {
        commands: [
          { imei: 'a', speed: 1 },
          { imei: 'a', speed: 2 },
        ],
        list: true,
        message: batch[0],
      },
      { commands: [{ imei: 'b', speed: 3 }], list: false, message: batch[1] },
    ]);
    expect(undecodable).toEqual([]);
  });

  it('sets aside a whole list when one of its commands fails the schema, naming its place in the list', () => {
    const batch = [message('1', '[{"imei":"a","speed":1},{"imei":"a","speed":"fast"}]')];

    const { decoded, undecodable } = decodeBatch(schema, batch);

    expect(decoded).toEqual([]);
    expect(undecodable.map(({ reason }) => reason)).toEqual([expect.stringMatching(/^invalid command: 1\.speed: /)]);
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

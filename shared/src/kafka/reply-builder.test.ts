import type { KafkaMessage } from 'kafkajs';
import { REPLIES_PER_MESSAGE } from '../schemas/reply.schema';
import { PRODUCE_BYTES, produceRounds } from './produce-size';
import { addressedReply, deadLetter, outgoingMessages, replyFor, type Outgoing } from './reply-builder';
import { headers } from './topics';

function message(messageHeaders: Record<string, string>, offset = '7'): KafkaMessage {
  return {
    offset,
    key: Buffer.from('k'),
    value: Buffer.from('{}'),
    timestamp: '0',
    attributes: 0,
    headers: messageHeaders,
  } as KafkaMessage;
}

const stored = { id: 3, information: 'recorded', duplicate: false };

describe('replyFor', () => {
  it('answers a stored command with its row', () => {
    expect(replyFor(stored)).toEqual({ ok: true, id: 3, information: 'recorded', duplicate: false });
  });

  it('answers a refused command 400 E-V1/1-01 without the database’s own words', () => {
    const reply = replyFor({ refused: 'refused by the database: date/time field value out of range', fault: 'data' });
    expect(reply).toEqual({
      ok: false,
      code: 'E-V1/1-01',
      message: 'The request body is invalid',
      detail: 'a value of this request cannot be stored',
    });
  });

  it('answers a command that failed alone for good 500 E-S1/1-00, saying it was set aside, without the database’s words', () => {
    const reply = replyFor({ refused: 'failed alone as in its batch: out of shared memory', fault: 'store' });
    expect(reply).toEqual({
      ok: false,
      code: 'E-S1/1-00',
      message: 'Internal server error',
      detail: 'this request could not be stored and was set aside for an operator',
    });
  });

  it("answers a command the writer rejected with its rule's code, message and detail", () => {
    const reply = replyFor({ rejected: 'idempotencyKeyReused', detail: 'send a new key' });
    expect(reply).toEqual({
      ok: false,
      code: 'E-V1/1-07',
      message: 'This Idempotency-Key was already used with a different request body',
      detail: 'send a new key',
    });
  });
});

describe('addressedReply', () => {
  it('addresses the reply to the topic and correlation id the command carries', () => {
    const outgoing = addressedReply(message({ [headers.correlationId]: 'c-1', [headers.replyTopic]: 'p.replies' }), stored);
    expect(outgoing).toEqual({ replyTopic: 'p.replies', reply: { correlationId: 'c-1', reply: replyFor(stored) } });
  });

  it('answers a list of commands with their replies, in the order of the list', () => {
    const refused = { refused: 'refused by the database: out of range', fault: 'data' as const };
    const outgoing = addressedReply(message({ [headers.correlationId]: 'c-1', [headers.replyTopic]: 'p.replies' }), [stored, refused]);
    expect(outgoing).toEqual({ replyTopic: 'p.replies', reply: { correlationId: 'c-1', replies: [replyFor(stored), replyFor(refused)] } });
  });

  it('names the reply partition its command asked for, and none when the header is absent or not a partition', () => {
    const asked = (partition: string) =>
      addressedReply(
        message({ [headers.correlationId]: 'c-1', [headers.replyTopic]: 'p.replies', [headers.replyPartition]: partition }),
        stored,
      );
    expect(asked('4')).toMatchObject({ replyTopic: 'p.replies', replyPartition: 4 });
    expect(asked('-1')).not.toHaveProperty('replyPartition');
    expect(asked('x')).not.toHaveProperty('replyPartition');
  });

  it('sends nothing for a command that asks for no reply', () => {
    expect(addressedReply(message({ [headers.correlationId]: 'c-1' }), stored)).toBeUndefined();
    expect(addressedReply(message({ [headers.replyTopic]: 'p.replies' }), stored)).toBeUndefined();
  });
});

describe('deadLetter', () => {
  it('keeps the message as it was and adds the reason and where it came from', () => {
    const original = message({ [headers.requestId]: 'r-1' }, '42');
    const outgoing = deadLetter(original, 'not JSON', { topic: 'p.trip-locations', partition: 5 });
    expect(outgoing).toEqual({
      deadLetter: {
        key: original.key,
        value: original.value,
        headers: {
          [headers.requestId]: 'r-1',
          [headers.deadLetterReason]: 'not JSON',
          [headers.deadLetterSource]: 'p.trip-locations/5/42',
        },
      },
    });
  });
});

describe('outgoingMessages', () => {
  const reply = (topic: string, correlationId: string): Outgoing => ({
    replyTopic: topic,
    reply: { correlationId, reply: replyFor(stored) },
  });

  it('puts the replies to one gateway in one message, per reply topic, and the dead letters last', () => {
    const letter = deadLetter(message({}), 'bad', { topic: 't', partition: 0 });
    const topicMessages = outgoingMessages([reply('a', '1'), letter, reply('b', '2'), reply('a', '3')], 'p.dead-letter');

    expect(topicMessages.map(({ topic, messages }) => [topic, messages.length])).toEqual([
      ['a', 1],
      ['b', 1],
      ['p.dead-letter', 1],
    ]);
    const sentToA = JSON.parse(String(topicMessages[0]!.messages[0]!.value));
    expect(sentToA.map((entry: { correlationId: string }) => entry.correlationId)).toEqual(['1', '3']);
  });

  it('counts each reply of a list against REPLIES_PER_MESSAGE, and sends a list longer than that alone', () => {
    const list = (correlationId: string, length: number): Outgoing => ({
      replyTopic: 'a',
      reply: { correlationId, replies: Array.from({ length }, () => replyFor(stored)) },
    });
    const [toA] = outgoingMessages(
      [list('1', REPLIES_PER_MESSAGE - 1), reply('a', '2'), reply('a', '3'), list('4', REPLIES_PER_MESSAGE + 5), reply('a', '5')],
      'p.dead-letter',
    );
    const correlationIds = toA!.messages.map((m) =>
      JSON.parse(String(m.value)).map((entry: { correlationId: string }) => entry.correlationId),
    );
    expect(correlationIds).toEqual([['1', '2'], ['3'], ['4'], ['5']]);
  });

  it('splits the replies into messages of at most REPLIES_PER_MESSAGE', () => {
    const many = Array.from({ length: REPLIES_PER_MESSAGE + 1 }, (_, index) => reply('a', String(index)));
    const [toA] = outgoingMessages(many, 'p.dead-letter');
    expect(toA!.messages.map((m) => JSON.parse(String(m.value)).length)).toEqual([REPLIES_PER_MESSAGE, 1]);
  });

  it('sends each reply to the partition its gateway named, and only there', () => {
    const to = (partition: number | undefined, correlationId: string): Outgoing => ({
      replyTopic: 'a',
      ...(partition === undefined ? {} : { replyPartition: partition }),
      reply: { correlationId, reply: replyFor(stored) },
    });
    const [toA] = outgoingMessages([to(2, '1'), to(0, '2'), to(2, '3'), to(undefined, '4')], 'p.dead-letter');
    const sent = toA!.messages.map((m) => [
      m.partition,
      JSON.parse(String(m.value)).map((entry: { correlationId: string }) => entry.correlationId),
    ]);
    expect(sent).toEqual([
      [2, ['1', '3']],
      [0, ['2']],
      [undefined, ['4']],
    ]);
  });
});

describe('produceRounds', () => {
  const weighing = (kilobytes: number, label: string) => ({ partition: 0, value: `${label}:${'x'.repeat(kilobytes * 1024)}` });
  const labels = (rounds: ReturnType<typeof produceRounds>, topic: string) =>
    rounds.flatMap((round) => round.filter((t) => t.topic === topic).flatMap((t) => t.messages.map((m) => String(m.value).split(':')[0])));

  it('sends an ordinary flush as one produce, as it was', () => {
    const topicMessages = [
      { topic: 'replies', messages: [weighing(2, 'r1'), weighing(2, 'r2')] },
      { topic: 'positions', messages: [weighing(4, 'p1')] },
    ];
    expect(produceRounds(topicMessages)).toEqual([topicMessages]);
  });

  it('splits a flush heavier than the broker takes into produces under PRODUCE_BYTES, every topic in order', () => {
    // 3 MiB of announcements for one partition, and replies: what a writer owes after a backlog.
    const positions = Array.from({ length: 30 }, (_, i) => weighing(100, `p${i}`));
    const replies = Array.from({ length: 10 }, (_, i) => weighing(50, `r${i}`));
    const rounds = produceRounds([
      { topic: 'replies', messages: replies },
      { topic: 'positions', messages: positions },
    ]);

    expect(rounds.length).toBeGreaterThan(3);
    for (const round of rounds) {
      const bytes = round.flatMap((t) => t.messages).reduce((sum, m) => sum + Buffer.byteLength(String(m.value)), 0);
      expect(bytes).toBeLessThanOrEqual(PRODUCE_BYTES);
    }
    expect(labels(rounds, 'positions')).toEqual(positions.map((m) => m.value.split(':')[0]));
    expect(labels(rounds, 'replies')).toEqual(replies.map((m) => m.value.split(':')[0]));
  });

  it('counts bytes, not characters, and sends a message heavier than PRODUCE_BYTES alone', () => {
    const wide = { value: 'ž'.repeat(300 * 1024) }; // 600 KiB of UTF-8 in 300 Ki characters
    const heavy = { value: Buffer.alloc(PRODUCE_BYTES + 1) };
    const rounds = produceRounds([{ topic: 't', messages: [wide, wide, heavy, wide] }]);
    expect(rounds.map((round) => round[0]!.messages.length)).toEqual([1, 1, 1, 1]);
  });
});

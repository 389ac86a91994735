import type { TopicMessages } from 'kafkajs';
import { messageBytes, PRODUCE_BYTES } from '@fleet/shared/kafka/produce-size';
import { BatchingPublisher, byTopic, LeaderStillBusy, PublishTimedOut, type OutgoingCommand } from './batching-publisher';

const command = (topic: string, correlationId: string): OutgoingCommand => ({ topic, correlationId, message: { value: correlationId } });

/** A publisher whose produces are recorded; each produce waits until released when `hold` is set. */
function recording(options: { lingerMs?: number; maxBatchSize?: number; maxBatchBytes?: number; fail?: boolean } = {}) {
  const sends: TopicMessages[][] = [];
  const outcomes: Array<{ ids: string[]; failed: boolean }> = [];
  const publisher = new BatchingPublisher({
    send: async (topicMessages) => {
      sends.push(topicMessages);
      if (options.fail) throw new Error('broker down');
    },
    maxBatchSize: options.maxBatchSize ?? 100,
    maxBatchBytes: options.maxBatchBytes ?? PRODUCE_BYTES,
    lingerMs: options.lingerMs ?? 0,
    onSent: (batch, _seconds, error) => outcomes.push({ ids: batch.map((c) => c.correlationId), failed: error !== undefined }),
  });
  return { publisher, sends, outcomes };
}

describe('byTopic', () => {
  it('groups messages by topic, keeping their order within each topic', () => {
    const grouped = byTopic([command('t', '1'), command('g', '2'), command('t', '3')]);
    expect(grouped).toEqual([
      { topic: 't', messages: [{ value: '1' }, { value: '3' }] },
      { topic: 'g', messages: [{ value: '2' }] },
    ]);
  });
});

describe('BatchingPublisher', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when commands arrive in the same turn, sends them in one produce', async () => {
    const { publisher, sends, outcomes } = recording();
    publisher.publish(command('t', '1'));
    publisher.publish(command('t', '2'));
    publisher.publish(command('g', '3'));

    await jest.runAllTimersAsync();

    expect(sends).toHaveLength(1);
    expect(outcomes).toEqual([{ ids: ['1', '2', '3'], failed: false }]);
  });

  it('a produce past sendTimeoutMs fails its commands as timed out (sent, maybe stored); what comes before it settles fails unsent', async () => {
    let release!: () => void;
    const errors: unknown[] = [];
    const sends: TopicMessages[][] = [];
    const publisher = new BatchingPublisher({
      send: (topicMessages) => {
        sends.push(topicMessages);
        return sends.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      sendTimeoutMs: 100,
      maxBatchSize: 100,
      maxBatchBytes: PRODUCE_BYTES,
      lingerMs: 0,
      onSent: (_batch, _seconds, error) => errors.push(error),
    });
    publisher.publish(command('t', '1'));
    await jest.advanceTimersByTimeAsync(100);
    expect(errors[0]).toBeInstanceOf(PublishTimedOut);

    publisher.publish(command('t', '2'));
    await jest.advanceTimersByTimeAsync(0);
    expect(errors[1]).toBeInstanceOf(LeaderStillBusy);
    expect(sends).toHaveLength(1);

    release();
    await jest.advanceTimersByTimeAsync(0);
    publisher.publish(command('t', '3'));
    await jest.advanceTimersByTimeAsync(0);
    expect(errors[2]).toBeUndefined();
    expect(sends).toHaveLength(2);
  });

  it('with a linger, sends the first command after a quiet moment at once and gathers those following it within the linger', async () => {
    const { publisher, sends } = recording({ lingerMs: 50 });
    publisher.publish(command('t', '1'));
    await jest.advanceTimersByTimeAsync(0);
    expect(sends).toEqual([[{ topic: 't', messages: [{ value: '1' }] }]]);

    await jest.advanceTimersByTimeAsync(20);
    publisher.publish(command('t', '2'));
    await jest.advanceTimersByTimeAsync(20);
    publisher.publish(command('t', '3'));
    expect(sends).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(10);
    expect(sends[1]).toEqual([{ topic: 't', messages: [{ value: '2' }, { value: '3' }] }]);

    await jest.advanceTimersByTimeAsync(100);
    publisher.publish(command('t', '4'));
    await jest.advanceTimersByTimeAsync(0);
    expect(sends[2]).toEqual([{ topic: 't', messages: [{ value: '4' }] }]);
  });

  it('counts the commands gathering for their batch as unsent until the produce takes them', async () => {
    const { publisher, sends } = recording({ lingerMs: 50 });
    publisher.publish({ ...command('t', 'list'), commands: 3 });
    publisher.publish(command('t', '2'));
    expect(publisher.unsentCount()).toBe(4);

    await jest.advanceTimersByTimeAsync(50);

    expect(sends).toHaveLength(1);
    expect(publisher.unsentCount()).toBe(0);
  });

  it('sends at most maxBatchSize commands in one produce', async () => {
    const { publisher, outcomes } = recording({ maxBatchSize: 2 });
    for (const id of ['1', '2', '3', '4', '5']) publisher.publish(command('t', id));

    await jest.runAllTimersAsync();

    expect(outcomes.map((outcome) => outcome.ids)).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('counts each command of a list against maxBatchSize, and sends a list longer than that alone', async () => {
    const { publisher, outcomes } = recording({ maxBatchSize: 10 });
    publisher.publish({ ...command('t', 'list of 6'), commands: 6 });
    publisher.publish(command('t', 'one'));
    publisher.publish({ ...command('t', 'list of 4'), commands: 4 });
    publisher.publish({ ...command('t', 'list of 12'), commands: 12 });
    publisher.publish(command('t', 'last'));

    await jest.runAllTimersAsync();

    expect(outcomes.map((outcome) => outcome.ids)).toEqual([['list of 6', 'one'], ['list of 4'], ['list of 12'], ['last']]);
  });

  it('sends at most maxBatchBytes in one produce, and a message heavier than that alone', async () => {
    const weighing = (id: string, kilobytes: number): OutgoingCommand => ({
      topic: 't',
      correlationId: id,
      message: { value: 'x'.repeat(kilobytes * 1024) },
    });
    const { publisher, sends, outcomes } = recording({ maxBatchBytes: 1024 * 1024 });
    for (const [id, kilobytes] of [
      ['a', 400],
      ['b', 400],
      ['c', 400],
      ['heavy', 1500],
      ['d', 100],
    ] as const) {
      publisher.publish(weighing(id, kilobytes));
    }

    await jest.runAllTimersAsync();

    expect(outcomes.map((outcome) => outcome.ids)).toEqual([['a', 'b'], ['c'], ['heavy'], ['d']]);
    const sizes = sends.map((send) => send.flatMap((t) => t.messages).reduce((sum, m) => sum + messageBytes(m), 0));
    expect(sizes.filter((bytes) => bytes > 1024 * 1024)).toHaveLength(1);
  });

  it('when a produce fails, reports the batch as failed', async () => {
    const { publisher, outcomes } = recording({ fail: true });
    publisher.publish(command('t', '1'));

    await jest.runAllTimersAsync();

    expect(outcomes).toEqual([{ ids: ['1'], failed: true }]);
  });

  it("sends each leader's commands apart: a leader that does not answer holds up only its own", async () => {
    const sent: string[][] = [];
    const held: Array<() => void> = [];
    const outcomes: string[][] = [];
    const leaders: Array<number | undefined> = [];
    const publisher = new BatchingPublisher({
      send: async (topicMessages) => {
        const ids = topicMessages.flatMap((group) => group.messages.map((message) => String(message.value)));
        sent.push(ids);
        if (ids.some((id) => id.startsWith('stalled'))) await new Promise<void>((resolve) => held.push(resolve));
      },
      maxBatchSize: 100,
      maxBatchBytes: PRODUCE_BYTES,
      lingerMs: 0,
      onSent: (batch, _seconds, _error, leader) => {
        outcomes.push(batch.map((c) => c.correlationId));
        leaders.push(leader);
      },
      leaderOf: (command) => (command.correlationId.startsWith('stalled') ? 1 : 2),
    });
    publisher.publish(command('t', 'stalled-1'));
    publisher.publish(command('t', 'live-1'));
    await jest.runAllTimersAsync();
    publisher.publish(command('t', 'stalled-2'));
    publisher.publish(command('t', 'live-2'));
    await jest.runAllTimersAsync();

    // Leader 2's commands went out in two produces while leader 1's first is still unanswered.
    expect(sent).toEqual([['stalled-1'], ['live-1'], ['live-2']]);
    expect(outcomes).toEqual([['live-1'], ['live-2']]);

    held.shift()!();
    await jest.runAllTimersAsync();
    expect(sent.at(-1)).toEqual(['stalled-2']);
    expect(outcomes).toEqual([['live-1'], ['live-2'], ['stalled-1']]);
    // Each outcome names the leader its lane sends to.
    expect(leaders).toEqual([2, 2, 1]);
  });

  it('past sendTimeoutMs fails the batch, then fails what follows at once until the client has finished that produce, and then sends again', async () => {
    const sent: string[][] = [];
    let finishFirst: () => void = () => undefined;
    const outcomes: Array<{ ids: string[]; failed: boolean }> = [];
    const publisher = new BatchingPublisher({
      send: async (topicMessages) => {
        const ids = topicMessages.flatMap((group) => group.messages.map((message) => String(message.value)));
        sent.push(ids);
        if (sent.length === 1) await new Promise<void>((resolve) => (finishFirst = resolve));
      },
      maxBatchSize: 100,
      maxBatchBytes: PRODUCE_BYTES,
      lingerMs: 0,
      sendTimeoutMs: 2000,
      onSent: (batch, _seconds, error) => outcomes.push({ ids: batch.map((c) => c.correlationId), failed: error !== undefined }),
    });
    publisher.publish(command('t', 'slow'));
    await jest.advanceTimersByTimeAsync(2000);
    expect(outcomes).toEqual([{ ids: ['slow'], failed: true }]);

    publisher.publish(command('t', 'meanwhile'));
    await jest.advanceTimersByTimeAsync(10);
    // Not sent: the first produce may still reach the partition, and a second in flight beside it could not.
    expect(sent).toEqual([['slow']]);
    expect(outcomes.at(-1)).toEqual({ ids: ['meanwhile'], failed: true });

    finishFirst();
    await jest.advanceTimersByTimeAsync(10);
    publisher.publish(command('t', 'after'));
    await jest.advanceTimersByTimeAsync(10);
    expect(sent).toEqual([['slow'], ['after']]);
    expect(outcomes.at(-1)).toEqual({ ids: ['after'], failed: false });
  });
});

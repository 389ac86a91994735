import type { TopicMessages } from 'kafkajs';
import { TopicLayout } from './topic-layout';
import { byLeader, LeaderSends } from './leader-sends';

/** Two topics of four partitions: partitions 0 and 1 led by broker 1, 2 and 3 by broker 2. */
function layout(): TopicLayout {
  const partitions = [0, 1, 2, 3].map((partitionId) => ({
    partitionId,
    leader: partitionId < 2 ? 1 : 2,
    replicas: [1, 2],
    isr: [1, 2],
    offlineReplicas: [],
    partitionErrorCode: 0,
  }));
  const described = new TopicLayout();
  described.update([
    { name: 'replies', partitions },
    { name: 'positions', partitions },
  ]);
  return described;
}

describe('byLeader', () => {
  it('splits messages by the leader of their partition, named or keyed, keeping each topic in order; an unplaced one goes to no leader', () => {
    const keyed = layout();
    const keyOnBroker2 = ['a', 'b', 'c', 'd', 'e', 'f'].find((key) => keyed.partitionOf('positions', key)! >= 2)!;
    const shares = byLeader(
      [
        {
          topic: 'replies',
          messages: [
            { partition: 0, value: 'r0' },
            { partition: 3, value: 'r3' },
            { partition: 1, value: 'r1' },
          ],
        },
        { topic: 'positions', messages: [{ key: keyOnBroker2, value: 'p' }] },
        { topic: 'dead-letter', messages: [{ value: 'd' }] },
      ],
      keyed,
    );
    expect(shares).toEqual([
      {
        leader: 1,
        topicMessages: [
          {
            topic: 'replies',
            messages: [
              { partition: 0, value: 'r0' },
              { partition: 1, value: 'r1' },
            ],
          },
        ],
      },
      {
        leader: 2,
        topicMessages: [
          { topic: 'replies', messages: [{ partition: 3, value: 'r3' }] },
          { topic: 'positions', messages: [{ key: keyOnBroker2, value: 'p' }] },
        ],
      },
      { leader: undefined, topicMessages: [{ topic: 'dead-letter', messages: [{ value: 'd' }] }] },
    ]);
  });
});

describe('LeaderSends', () => {
  it('a leader that does not answer holds only its own share: the other leader sends on, and what comes to the silent one waits for its produce', async () => {
    const sent: TopicMessages[][] = [];
    let answerBroker2: (() => void) | undefined;
    const sends = new LeaderSends({
      layout: layout(),
      refreshLeaders: async () => undefined,
      send: (round) => {
        sent.push(round);
        const toBroker2 = round.some(({ messages }) => messages.some((message) => message.partition! >= 2));
        // Broker 2 answers its first produce only when told, and the next at once.
        if (!toBroker2 || answerBroker2) return Promise.resolve();
        return new Promise<void>((resolve) => (answerBroker2 = resolve));
      },
    });
    const [toBroker1, toBroker2] = sends.split([
      {
        topic: 'replies',
        messages: [
          { partition: 0, value: 'a' },
          { partition: 2, value: 'b' },
        ],
      },
    ]);

    const stuck = sends.send(toBroker2!);
    await sends.send(toBroker1!);
    await sends.send(sends.split([{ topic: 'replies', messages: [{ partition: 1, value: 'c' }] }])[0]!);
    const behind = sends.send(sends.split([{ topic: 'replies', messages: [{ partition: 3, value: 'd' }] }])[0]!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((round) => round[0]!.messages.map((message) => message.value))).toEqual([['b'], ['a'], ['c']]);

    answerBroker2!();
    await Promise.all([stuck, behind]);
    expect(sent.map((round) => round[0]!.messages.map((message) => message.value))).toEqual([['b'], ['a'], ['c'], ['d']]);
  });

  it("a failed produce fails its share and asks for the partitions' leaders again", async () => {
    let refreshed = 0;
    const sends = new LeaderSends({
      layout: layout(),
      refreshLeaders: async () => {
        refreshed += 1;
      },
      send: () => Promise.reject(new Error('Request Produce(key: 0, version: 7) timed out')),
    });
    const [share] = sends.split([{ topic: 'replies', messages: [{ partition: 0, value: 'a' }] }]);
    await expect(sends.send(share!)).rejects.toThrow('timed out');
    expect(refreshed).toBe(1);
  });
});

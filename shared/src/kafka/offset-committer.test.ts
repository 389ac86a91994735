import type { TopicPartitionOffsetAndMetadata } from 'kafkajs';
import pino from 'pino';
import { OffsetCommitter } from './offset-committer';

function committer() {
  const commits: TopicPartitionOffsetAndMetadata[][] = [];
  let failNext = false;
  const offsets = new OffsetCommitter({ topic: 't', logger: pino({ level: 'silent' }) });
  const commit = async (list: TopicPartitionOffsetAndMetadata[]) => {
    if (failNext) {
      failNext = false;
      throw new Error('coordinator moved');
    }
    commits.push(list);
  };
  return { offsets, commits, commit, failOnce: () => (failNext = true) };
}

describe('OffsetCommitter', () => {
  it('commits the offset after the last stored message of each owned partition', async () => {
    const { offsets, commits, commit } = committer();
    offsets.assigned([0, 1]);
    offsets.stored(0, '9');
    offsets.stored(1, '41');
    offsets.stored(0, '19');

    await offsets.commit(commit);

    expect(commits).toEqual([
      [
        { topic: 't', partition: 0, offset: '20' },
        { topic: 't', partition: 1, offset: '42' },
      ],
    ]);
  });

  it('commits nothing when nothing was stored since the last commit', async () => {
    const { offsets, commits, commit } = committer();
    offsets.assigned([0]);
    offsets.stored(0, '1');
    await offsets.commit(commit);
    await offsets.commit(commit);
    expect(commits).toHaveLength(1);
  });

  it('after a rebalance, never commits a partition this member no longer owns', async () => {
    const { offsets, commits, commit } = committer();
    offsets.assigned([0, 1]);
    offsets.stored(0, '5');
    offsets.stored(1, '5');

    offsets.assigned([1]);
    await offsets.commit(commit);

    expect(commits).toEqual([[{ topic: 't', partition: 1, offset: '6' }]]);
  });

  it('when a commit fails, tries the same offsets again next time unless a newer one was stored', async () => {
    const { offsets, commits, commit, failOnce } = committer();
    offsets.assigned([0, 1]);
    offsets.stored(0, '5');
    offsets.stored(1, '5');
    failOnce();
    await offsets.commit(commit);
    offsets.stored(1, '8');

    await offsets.commit(commit);

    expect(commits).toEqual([
      [
        { topic: 't', partition: 0, offset: '6' },
        { topic: 't', partition: 1, offset: '9' },
      ],
    ]);
  });

  it('never moves an owned partition back: a batch finishing late, after a later one was recorded or committed, changes nothing', async () => {
    const { offsets, commits, commit } = committer();
    offsets.assigned([0]);
    offsets.stored(0, '9');
    offsets.stored(0, '4');
    await offsets.commit(commit);
    offsets.stored(0, '6');
    await offsets.commit(commit);

    expect(commits).toEqual([[{ topic: 't', partition: 0, offset: '10' }]]);
  });

  it('keeps offsets with very large values exact', async () => {
    const { offsets, commits, commit } = committer();
    offsets.assigned([0]);
    offsets.stored(0, '9007199254740993');
    await offsets.commit(commit);
    expect(commits[0]![0]!.offset).toBe('9007199254740994');
  });

  it('a commit made while another is under way waits for it, and takes back what it failed to commit', async () => {
    const { offsets, commits } = committer();
    offsets.assigned([0]);
    offsets.stored(0, '4');
    let release: (() => void) | undefined;
    let first = true;
    const slowThenFailing = (list: TopicPartitionOffsetAndMetadata[]) => {
      if (!first) {
        commits.push(list);
        return Promise.resolve();
      }
      first = false;
      return new Promise<void>((_, reject) => (release = () => reject(new Error('the consumer left the group'))));
    };

    const timerCommit = offsets.commit(slowThenFailing);
    const finalCommit = offsets.commit(slowThenFailing);
    await Promise.resolve();
    release!();
    await timerCommit.catch(() => undefined);
    await finalCommit;

    expect(commits).toEqual([[{ topic: 't', partition: 0, offset: '5' }]]);
  });

  it('commits on its timer through the consumer running at each tick, and not while there is none', async () => {
    jest.useFakeTimers();
    try {
      const { offsets, commits, commit } = committer();
      let current: { commitOffsets: typeof commit } | undefined = undefined;
      const timer = offsets.commitEvery(1000, () => current);
      offsets.assigned([0]);
      offsets.stored(0, '4');

      await jest.advanceTimersByTimeAsync(1000);
      expect(commits).toEqual([]);

      current = { commitOffsets: commit };
      await jest.advanceTimersByTimeAsync(1000);
      expect(commits).toEqual([[{ topic: 't', partition: 0, offset: '5' }]]);

      clearInterval(timer);
      offsets.stored(0, '9');
      await jest.advanceTimersByTimeAsync(3000);
      expect(commits).toHaveLength(1);
    } finally {
      jest.useRealTimers();
    }
  });
});

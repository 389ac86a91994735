import { BatchCompletion } from './batch-completion';

/** A send resolved by hand: true sent, false abandoned. */
function pending() {
  let settle!: (sent: boolean) => void;
  const promise = new Promise<boolean>((resolve) => (settle = resolve));
  return { promise, settle };
}

describe('BatchCompletion', () => {
  it("a batch is done with once it and every earlier batch of its partition were sent, in order; another partition's go their own way", async () => {
    const completion = new BatchCompletion(100);
    const done: string[] = [];
    const first = pending();
    const second = pending();
    const other = pending();
    const tracked = [
      completion.track(0, 1, first.promise, () => done.push('0:first')),
      completion.track(0, 1, second.promise, () => done.push('0:second')),
      completion.track(1, 1, other.promise, () => done.push('1:other')),
    ];

    second.settle(true);
    other.settle(true);
    await tracked[2];
    expect(done).toEqual(['1:other']);

    first.settle(true);
    await Promise.all(tracked);
    expect(done).toEqual(['1:other', '0:first', '0:second']);
  });

  it('after a batch abandoned, none of its partition is done with until the next generation', async () => {
    const completion = new BatchCompletion(100);
    const done: string[] = [];
    await Promise.all([
      completion.track(0, 1, Promise.resolve(false), () => done.push('abandoned')),
      completion.track(0, 1, Promise.resolve(true), () => done.push('after it')),
      completion.track(0, 1, Promise.reject(new Error('lost')), () => done.push('failed')),
    ]);
    expect(done).toEqual([]);

    completion.reset();
    await completion.track(0, 1, Promise.resolve(true), () => done.push('next generation'));
    expect(done).toEqual(['next generation']);
  });

  it('a new batch waits while maxUnsent messages wait to be sent, and goes on once some are', async () => {
    const completion = new BatchCompletion(3);
    const send = pending();
    void completion.track(0, 3, send.promise, () => undefined);
    let roomMade = false;
    const room = completion.hasRoom().then(() => (roomMade = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(roomMade).toBe(false);

    send.settle(true);
    await room;
    expect(roomMade).toBe(true);
  });
});

import { AppError } from '@fleet/shared/errors';
import type { CommandReply } from '@fleet/shared/schemas/reply.schema';
import { PendingReplies } from './pending-replies';

const stored: CommandReply = { ok: true, id: 7, information: 'stored', duplicate: false };

/** A table whose settlements are recorded, driven by jest's fake clock. */
function table(replyTimeoutMs = 1000) {
  const settled: Array<{ seconds: number; outcome: string }> = [];
  const pending = new PendingReplies({ replyTimeoutMs, onSettled: (seconds, outcome) => settled.push({ seconds, outcome }) });
  return { pending, settled };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('PendingReplies', () => {
  it('when the reply arrives in time, resolves the request with it and counts it as replied', async () => {
    const { pending, settled } = table();
    const answer = pending.add('a');
    jest.advanceTimersByTime(300);

    expect(pending.reply('a', { reply: stored })).toBe(true);

    await expect(answer).resolves.toEqual(stored);
    expect(settled).toEqual([{ seconds: 0.3, outcome: 'replied' }]);
    expect(pending.size).toBe(0);
  });

  it('counts a list of commands as its commands until its replies arrive', async () => {
    const { pending } = table();
    const single = pending.add('one');
    const list = pending.add('list', 100);
    expect(pending.size).toBe(101);

    pending.reply('list', { reply: [stored, stored] });
    await expect(list).resolves.toEqual([stored, stored]);
    expect(pending.size).toBe(1);
    pending.reply('one', { reply: stored });
    await expect(single).resolves.toEqual(stored);
    expect(pending.size).toBe(0);
  });

  it('when no reply arrives within the timeout, rejects with 503 E-S1/1-02 and counts a timeout', async () => {
    const { pending, settled } = table(1000);
    const answer = pending.add('a');
    const caught = answer.catch((error: AppError) => error);

    jest.advanceTimersByTime(999);
    expect(pending.size).toBe(1);
    jest.advanceTimersByTime(100);

    const error = await caught;
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'E-S1/1-02', category: 'unavailable', retryAfterSeconds: 1 });
    expect(settled.map((entry) => entry.outcome)).toEqual(['timeout']);
    expect(pending.size).toBe(0);
  });

  it('expires only the overdue requests, oldest first, and keeps the younger ones waiting', async () => {
    const { pending } = table(1000);
    const old = pending.add('old').catch((error: AppError) => error.code);
    jest.advanceTimersByTime(600);
    const young = pending.add('young');

    jest.advanceTimersByTime(500);

    await expect(old).resolves.toBe('E-S1/1-02');
    expect(pending.has('young')).toBe(true);
    pending.reply('young', { reply: stored });
    await expect(young).resolves.toEqual(stored);
  });

  it('when a reply is for another gateway or arrives after the timeout, ignores it', async () => {
    const { pending } = table(100);
    const late = pending.add('late').catch(() => 'timed out');
    jest.advanceTimersByTime(200);
    await expect(late).resolves.toBe('timed out');

    expect(pending.reply('late', { reply: stored })).toBe(false);
    expect(pending.reply('someone-else', { reply: stored })).toBe(false);
  });

  it('when the command could not be published, fails the request without counting a reply', async () => {
    const { pending, settled } = table();
    const answer = pending.add('a').catch((error: AppError) => error.code);

    pending.fail(['a', 'unknown'], new AppError({ kind: 'brokerUnavailable' }));

    await expect(answer).resolves.toBe('E-S1/1-01');
    expect(settled).toEqual([]);
  });

  it('keeps no timer running while nothing waits', async () => {
    const { pending } = table();
    expect(jest.getTimerCount()).toBe(0);
    void pending.add('a');
    expect(jest.getTimerCount()).toBe(1);
    pending.reply('a', { reply: stored });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('drained() resolves once the last request is answered', async () => {
    const { pending } = table(60_000);
    void pending.add('a');
    let drained = false;
    const waiting = pending.drained(10_000).then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);

    pending.reply('a', { reply: stored });
    await waiting;
    expect(drained).toBe(true);
  });
});

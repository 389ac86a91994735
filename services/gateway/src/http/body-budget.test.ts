import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@fleet/shared/errors';
import { createBodyBudget, type BodyBudgetOptions } from './body-budget';

const KiB = 1024;

function exchange(headers: Record<string, string>) {
  const req = Object.assign(new EventEmitter(), { headers }) as unknown as IncomingMessage;
  const sent: Record<string, string> = {};
  const res = Object.assign(new EventEmitter(), {
    headersSent: false,
    setHeader: (name: string, value: string) => (sent[name.toLowerCase()] = value),
  }) as unknown as ServerResponse;
  return { req, res, sent, close: () => res.emit('close'), send: (bytes: number) => req.emit('data', Buffer.alloc(bytes)) };
}

/** Reserves for the exchange, collecting what its reading fails with. */
function open(budget: ReturnType<typeof createBodyBudget>, client: ReturnType<typeof exchange>) {
  const failures: AppError[] = [];
  const reading = budget.reserve(client.req, client.res);
  reading.failed.catch((error: AppError) => failures.push(error));
  return { reading, failures };
}

/** Lets the rejections of failed readings reach their handlers. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function refusal(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? `${error.category} ${error.code} retry-after ${error.retryAfterSeconds}` : String(error);
  }
}

function budgetOf(overrides: Partial<BodyBudgetOptions> = {}) {
  return createBodyBudget({ maxBytes: 10 * KiB, bodyLimitBytes: 8 * KiB, minBytesPerSecond: KiB, rateGraceMs: 5000, ...overrides });
}

describe('body budget', () => {
  test('a body is counted by the bytes that arrived, not by the length it declares', () => {
    const budget = budgetOf();
    const declared = exchange({ 'content-length': String(8 * KiB) });
    budget.reserve(declared.req, declared.res);
    expect(budget.inUse()).toBe(0);
    declared.send(100);
    expect(budget.inUse()).toBe(100);
    declared.close();
    expect(budget.inUse()).toBe(0);
  });

  test('many bodies declaring more than the budget, each sending a little, leave room for others', async () => {
    const budget = budgetOf();
    const slow = Array.from({ length: 40 }, () => exchange({ 'content-length': String(8 * KiB) }));
    for (const client of slow) {
      budget.reserve(client.req, client.res);
      client.send(1);
    }
    const other = exchange({ 'content-length': String(4 * KiB) });
    const { failures } = open(budget, other);
    other.send(4 * KiB);
    await settled();
    expect(failures).toEqual([]);
    expect(budget.inUse()).toBe(40 + 4 * KiB);
  });

  test('a body that outgrows the budget fails its read 503 E-S1/1-05, its connection closed; a spent budget refuses at once', async () => {
    const budget = budgetOf();
    const held = exchange({ 'content-length': String(6 * KiB) });
    budget.reserve(held.req, held.res);
    held.send(6 * KiB);
    const second = exchange({ 'transfer-encoding': 'chunked' });
    const { reading, failures } = open(budget, second);
    second.send(4 * KiB);
    expect(budget.inUse()).toBe(10 * KiB);
    second.send(1);
    await settled();
    expect(failures.map((error) => error.code)).toEqual(['E-S1/1-05']);
    expect(second.sent.connection).toBe('close');

    const third = exchange({ 'content-length': '10' });
    expect(refusal(() => budget.reserve(third.req, third.res))).toBe('unavailable E-S1/1-05 retry-after 1');

    reading.done();
    second.close();
    held.close();
    expect(budget.inUse()).toBe(0);
  });

  test('a compressed body is counted at the body limit from its first byte, its inflated size being unknown', () => {
    const budget = budgetOf();
    const gzip = exchange({ 'content-encoding': 'gzip', 'content-length': '100' });
    budget.reserve(gzip.req, gzip.res);
    expect(budget.inUse()).toBe(0);
    gzip.send(50);
    gzip.send(50);
    expect(budget.inUse()).toBe(8 * KiB);
  });

  test('a body under the floor rate after its grace period is cut 408 E-V1/1-08; a faster one, or one in its grace, is not', async () => {
    let clock = 0;
    const budget = budgetOf({ now: () => clock });
    const slow = exchange({ 'content-length': String(8 * KiB) });
    const steady = exchange({ 'content-length': String(8 * KiB) });
    const slowReading = open(budget, slow);
    const steadyReading = open(budget, steady);
    slow.send(10);
    steady.send(6 * KiB);

    clock = 4999;
    budget.cutSlowBodies();
    await settled();
    expect(slowReading.failures).toEqual([]);

    clock = 6000;
    budget.cutSlowBodies();
    await settled();
    expect(slowReading.failures.map((error) => [error.category, error.code])).toEqual([['timedOut', 'E-V1/1-08']]);
    expect(slow.sent.connection).toBe('close');
    expect(steadyReading.failures).toEqual([]);

    // Cut once: its bytes are no longer counted, and a later check does not judge it again.
    slow.send(100);
    expect(budget.inUse()).toBe(10 + 6 * KiB);
  });

  test('a body the parser has finished with is no longer judged', async () => {
    let clock = 0;
    const budget = budgetOf({ now: () => clock });
    const done = exchange({ 'content-length': '10' });
    const { reading, failures } = open(budget, done);
    reading.done();
    clock = 60_000;
    budget.cutSlowBodies();
    await settled();
    expect(failures).toEqual([]);
  });
});

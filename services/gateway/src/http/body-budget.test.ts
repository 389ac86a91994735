import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@fleet/shared';
import { createBodyBudget } from './body-budget';

const KiB = 1024;

function exchange(headers: Record<string, string>) {
  const req = Object.assign(new EventEmitter(), { headers }) as unknown as IncomingMessage;
  const res = new EventEmitter() as unknown as ServerResponse;
  return { req, res, close: () => res.emit('close') };
}

function refusal(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? `${error.httpStatus} ${error.code} retry-after ${error.retryAfterSeconds}` : String(error);
  }
}

describe('body budget', () => {
  test('a declared body is reserved whole, refused 503 E-S1/1-05 when it does not fit, and released when its response is done', () => {
    const budget = createBodyBudget({ maxBytes: 10 * KiB, bodyLimitBytes: 8 * KiB });
    const first = exchange({ 'content-length': String(6 * KiB) });
    budget.reserve(first.req, first.res);
    expect(budget.inUse()).toBe(6 * KiB);

    const second = exchange({ 'content-length': String(6 * KiB) });
    expect(refusal(() => budget.reserve(second.req, second.res))).toBe('503 E-S1/1-05 retry-after 1');

    first.close();
    expect(budget.inUse()).toBe(0);
    expect(refusal(() => budget.reserve(second.req, second.res))).toBeUndefined();
  });

  test('a declared body over the body limit reserves nothing: the parser refuses it 413 unread', () => {
    const budget = createBodyBudget({ maxBytes: 10 * KiB, bodyLimitBytes: 8 * KiB });
    const huge = exchange({ 'content-length': String(100 * KiB) });
    budget.reserve(huge.req, huge.res);
    expect(budget.inUse()).toBe(0);
  });

  test('a compressed body is reserved at the body limit, its inflated size being unknown', () => {
    const budget = createBodyBudget({ maxBytes: 10 * KiB, bodyLimitBytes: 8 * KiB });
    const gzip = exchange({ 'content-encoding': 'gzip', 'content-length': '100' });
    budget.reserve(gzip.req, gzip.res);
    expect(budget.inUse()).toBe(8 * KiB);
  });

  test('a chunked body is counted as it arrives, and fails its read once it outgrows the budget', () => {
    const budget = createBodyBudget({ maxBytes: 10 * KiB, bodyLimitBytes: 8 * KiB });
    const held = exchange({ 'content-length': String(4 * KiB) });
    budget.reserve(held.req, held.res);
    const chunked = exchange({ 'transfer-encoding': 'chunked' });
    const reading = budget.reserve(chunked.req, chunked.res);
    const failures: unknown[] = [];
    chunked.req.on('error', (error) => failures.push(error));

    chunked.req.emit('data', Buffer.alloc(4 * KiB));
    expect(budget.inUse()).toBe(8 * KiB);
    chunked.req.emit('data', Buffer.alloc(4 * KiB));
    expect(failures).toEqual([expect.objectContaining({ code: 'E-S1/1-05' })]);

    reading.done();
    chunked.close();
    held.close();
    expect(budget.inUse()).toBe(0);
  });
});

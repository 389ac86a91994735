// The parameters of the position history read, checked before any query runs: the time range, the page
// size and the keyset cursor (the device id and page size are read by query-parameters.ts). Every refusal
// is a 400 whose detail starts with the parameter's name. Pure: the clock is passed in.
import { invalidParameter, parseLimit, parseTime, single } from '../query-parameters';

export const DEFAULT_RANGE_MS = 24 * 60 * 60 * 1000;
export const MAX_RANGE_DAYS = 31;
const MAX_RANGE_MS = MAX_RANGE_DAYS * DEFAULT_RANGE_MS;
/** Far longer than any cursor issued (a 32-character imei and three numbers), so decoding stays cheap. */
const MAX_CURSOR_LENGTH = 256;
/** 9999-12-31T23:59:59.999Z, the last instant an ISO-8601 time of four-digit years names. */
const MAX_TIME_MS = 253_402_300_799_999;

/**
 * Where a page ends: the device, the range it was asked for and the exact gps_time of its last position,
 * in microseconds. The range travels with it, so a client following nextCursor without repeating from
 * and to reads the range of its first page, not one that moved with the clock. It is not signed: it
 * carries nothing a client could not ask for with from and to, and is only checked for being one the
 * gateway could have issued for this request.
 */
export interface Cursor {
  imei: string;
  fromMs: number;
  toMs: number;
  afterMicros: bigint;
}

export function encodeCursor(cursor: Cursor): string {
  const payload = [cursor.imei, cursor.fromMs, cursor.toMs, cursor.afterMicros.toString()];
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const notOurs = () => invalidParameter('cursor', 'is not a cursor this service issued for this device and range');

function isInstant(ms: unknown): ms is number {
  return Number.isSafeInteger(ms) && (ms as number) >= 0 && (ms as number) <= MAX_TIME_MS;
}

function decodeCursor(text: string, imei: string): Cursor {
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw notOurs();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  if (!Array.isArray(payload) || payload.length !== 4) throw notOurs();
  const [cursorImei, fromMs, toMs, afterMicros] = payload as unknown[];
  if (cursorImei !== imei || !isInstant(fromMs) || !isInstant(toMs) || typeof afterMicros !== 'string' || !/^\d{1,18}$/.test(afterMicros)) {
    throw notOurs();
  }
  return { imei, fromMs, toMs, afterMicros: BigInt(afterMicros) };
}

/** Microseconds since the epoch as exact timestamp text, e.g. 2026-11-22T08:30:00.000500Z. */
export function microsToIso(micros: bigint): string {
  const ms = micros / 1000n;
  const rest = micros % 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, -1)}${rest.toString().padStart(3, '0')}Z`;
}

export interface HistoryQuery {
  from: Date;
  to: Date;
  limit: number;
  /** The position after which this page starts, from the cursor. */
  afterMicros?: bigint;
  /** includeFiltered=true: the positions stored as filtered too, each saying why. */
  includeFiltered: boolean;
}

/**
 * from <= gpsTime < to; `to` defaults to now and `from` to 24 hours before `to`, at most 31 days apart.
 * With a cursor, from and to are the cursor's; given as well, they must be the same.
 */
export function parseHistoryQuery(imei: string, query: Record<string, unknown>, now: Date): HistoryQuery {
  let from = parseTime('from', single(query, 'from'));
  let to = parseTime('to', single(query, 'to'));
  const limit = parseLimit(single(query, 'limit'));
  const cursorText = single(query, 'cursor');
  const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText, imei);

  if (cursor) {
    if ((from && from.getTime() !== cursor.fromMs) || (to && to.getTime() !== cursor.toMs)) {
      throw invalidParameter('cursor', 'was issued for another from and to');
    }
    from = new Date(cursor.fromMs);
    to = new Date(cursor.toMs);
  }
  to ??= now;
  from ??= new Date(to.getTime() - DEFAULT_RANGE_MS);

  if (from.getTime() >= to.getTime()) throw invalidParameter('from', 'must be before to (now when to is not given)');
  if (to.getTime() - from.getTime() > MAX_RANGE_MS) throw invalidParameter('from', `must be at most ${MAX_RANGE_DAYS} days before to`);
  if (cursor && (cursor.afterMicros < BigInt(cursor.fromMs) * 1000n || cursor.afterMicros >= BigInt(cursor.toMs) * 1000n)) {
    throw notOurs();
  }
  const includeFiltered = single(query, 'includeFiltered');
  if (includeFiltered !== undefined && includeFiltered !== 'true' && includeFiltered !== 'false') {
    throw invalidParameter('includeFiltered', 'must be true or false');
  }
  return { from, to, limit, includeFiltered: includeFiltered === 'true', ...(cursor ? { afterMicros: cursor.afterMicros } : {}) };
}

// The query parameters every read shares, whatever its feature: a device id, a page size, a parameter
// given once. Every refusal is a 400 whose detail starts with the parameter's name.
import { AppError } from '@fleet/shared/errors';
import { parseIsoTime } from '@fleet/shared/schemas/gps-time';
import { imeiSchema } from '@fleet/shared/schemas/trip-location.schema';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export function invalidParameter(parameter: string, problem: string): AppError {
  return new AppError({ kind: 'parameterInvalid', detail: `${parameter}: ${problem}` });
}

export function parseImei(raw: unknown): string {
  const parsed = imeiSchema.safeParse(raw);
  if (!parsed.success) throw invalidParameter('imei', parsed.error.issues[0]!.message);
  return parsed.data;
}

/** One value of a query parameter: a repeated parameter is refused rather than one of its values picked. */
export function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, 'must be given once');
  return value;
}

/** A page size: 1 to MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE when absent. */
export function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PAGE_SIZE;
  const limit = /^\d{1,7}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_SIZE)) throw invalidParameter('limit', `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  return limit;
}

/** A record's id as the path carries it: a positive integer. */
export function parseRecordId(raw: string): number {
  const id = /^[1-9]\d{0,17}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw invalidParameter('id', 'must be a positive integer');
  return id;
}

/**
 * A keyset page's cursor over record ids: the last id answered, tagged with the kind of record (`tag`,
 * e.g. `g` for vehicle groups) so that one list's cursor is refused by another, in base64url. A list
 * whose pages are filtered binds its cursors to the filters (`bound`, a digest of them): followed with
 * other filters, a cursor would page through records the first request never asked for.
 */
export function idCursor(tag: string) {
  const pattern = new RegExp(`^${tag}:(\\d{1,18})(?::([A-Za-z0-9_-]{1,22}))?$`);
  return {
    encode: (id: number, bound?: string) =>
      Buffer.from(bound === undefined ? `${tag}:${id}` : `${tag}:${id}:${bound}`).toString('base64url'),
    /** The id after which the page starts; 0 without a cursor. */
    decode(raw: string | undefined, bound?: string): number {
      if (raw === undefined) return 0;
      const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
      const match = pattern.exec(decoded);
      if (!match || !Number.isSafeInteger(Number(match[1])) || (match[2] === undefined) !== (bound === undefined)) {
        throw invalidParameter('cursor', 'is not a cursor this service issued');
      }
      if (match[2] !== bound)
        throw invalidParameter('cursor', 'was made for other filters: send it with the filters of the request that answered it');
      return Number(match[1]);
    },
  };
}

/** A time parameter: ISO-8601 with an offset or Z; undefined when absent. */
export function parseTime(name: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const time = parseIsoTime(text);
  if (time) return time;
  // A + left unencoded in a query string arrives as a space.
  const hint = text.includes(' ') ? ' (send a + in a query string as %2B)' : '';
  throw invalidParameter(name, `must be an ISO-8601 time with an offset or Z, e.g. 2026-11-22T08:30:00Z${hint}`);
}

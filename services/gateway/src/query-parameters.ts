// The query parameters every read shares, whatever its feature: a device id, a page size, a parameter
// given once. Every refusal is a 400 whose detail starts with the parameter's name.
import { AppError } from '@fleet/shared/errors';
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

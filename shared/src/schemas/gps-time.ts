// Devices report time in several formats. Each accepted form has exactly one meaning, and everything
// ambiguous (a local time with no offset, an impossible calendar date) is refused rather than guessed.

/** Epoch values below this are seconds, above it milliseconds (1e11 s is in the year 5138). */
const EPOCH_SECONDS_LIMIT = 1e11;
const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const isoPattern =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})$/;
const plainUtcPattern = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const epochPattern = /^\d{1,16}(\.\d{1,3})?$/;

function calendarMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  ms: number,
): number | undefined {
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const time = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Date.UTC rolls 31 February over into March; a real date survives the round trip unchanged.
  const check = new Date(time);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    return undefined;
  }
  return time;
}

function offsetMinutes(designator: string): number | undefined {
  if (designator === 'Z') return 0;
  const sign = designator.startsWith('-') ? -1 : 1;
  const digits = designator.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4));
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

function fromEpoch(value: number): Date | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  const ms = Math.round(value < EPOCH_SECONDS_LIMIT ? value * 1000 : value);
  return ms <= MAX_EPOCH_MS ? new Date(ms) : undefined;
}

/**
 * Parses a GPS time: ISO-8601 with an offset or `Z` (fractions up to milliseconds),
 * `YYYY-MM-DD HH:mm:ss` in UTC, or epoch seconds or milliseconds (number or digit string).
 * Returns undefined for anything else.
 */
export function parseGpsTime(input: unknown): Date | undefined {
  if (typeof input === 'number') return fromEpoch(input);
  if (typeof input !== 'string') return undefined;
  const text = input.trim();

  if (epochPattern.test(text)) return fromEpoch(Number(text));

  const iso = isoPattern.exec(text);
  if (iso) {
    const [, y, mo, d, h, mi, s = '0', frac = '0', designator = 'Z'] = iso;
    const local = calendarMs(+y!, +mo!, +d!, +h!, +mi!, +s, Number(frac.padEnd(3, '0')));
    const offset = offsetMinutes(designator);
    if (local === undefined || offset === undefined) return undefined;
    const time = local - offset * 60_000;
    return time >= 0 && time <= MAX_EPOCH_MS ? new Date(time) : undefined;
  }

  const plain = plainUtcPattern.exec(text);
  if (plain) {
    const [, y, mo, d, h, mi, s] = plain;
    const time = calendarMs(+y!, +mo!, +d!, +h!, +mi!, +s!, 0);
    return time === undefined || time < 0 ? undefined : new Date(time);
  }
  return undefined;
}

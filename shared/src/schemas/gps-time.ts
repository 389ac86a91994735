// Devices report time in several formats. Each accepted form has exactly one meaning, and everything
// ambiguous (a local time with no offset, an impossible calendar date) is refused rather than guessed.

/** Epoch values below this are seconds, above it milliseconds (1e11 s is in the year 5138). */
const EPOCH_SECONDS_LIMIT = 1e11;
const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const isoPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})$/;
const plainUtcPattern = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const epochPattern = /^\d{1,16}(\.\d{1,3})?$/;
/** The offsets in use on Earth run from -12:00 to +14:00; ISO-8601 allows up to 23:59, which no clock shows. */
const MAX_OFFSET_MINUTES = 14 * 60;

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
  if (minutes > 59 || hours * 60 + minutes > MAX_OFFSET_MINUTES) return undefined;
  return sign * (hours * 60 + minutes);
}

/**
 * A leap second is written 23:59:60 UTC (05:29:60 at +05:30) by a receiver that passes on its UTC
 * clock. It is read as the next second, the first of the new day, as PostgreSQL reads it: that instant
 * exists, and the positions stay in order. A second 60 anywhere else is no time at all.
 * `secondBefore` is the instant of the same text with second 59.
 */
function afterLeapSecond(secondBefore: number): number | undefined {
  const date = new Date(secondBefore);
  const endsUtcDay = date.getUTCHours() === 23 && date.getUTCMinutes() === 59 && date.getUTCSeconds() === 59;
  return endsUtcDay ? secondBefore + 1000 : undefined;
}

/** The instant of a calendar time at an offset, reading second 60 as a leap second; undefined when it is none. */
function instantOf(local: number | undefined, offset: number | undefined, leap: boolean): number | undefined {
  if (local === undefined || offset === undefined) return undefined;
  const time = local - offset * 60_000;
  const instant = leap ? afterLeapSecond(time) : time;
  return instant !== undefined && instant >= 0 && instant <= MAX_EPOCH_MS ? instant : undefined;
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

  if (isoPattern.test(text)) return parseIsoTime(text);

  const plain = plainUtcPattern.exec(text);
  if (plain) {
    const [, y, mo, d, h, mi, s] = plain;
    const leap = s === '60';
    const time = instantOf(calendarMs(+y!, +mo!, +d!, +h!, +mi!, leap ? 59 : +s!, 0), 0, leap);
    return time === undefined ? undefined : new Date(time);
  }
  return undefined;
}

/**
 * Parses only the ISO-8601 form of a GPS time: with an offset (at most ±14:00) or `Z`, fractions up to
 * milliseconds. For the times a client queries with, where no other form is offered.
 */
export function parseIsoTime(text: string): Date | undefined {
  const iso = isoPattern.exec(text);
  if (!iso) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '0', designator = 'Z'] = iso;
  const leap = s === '60';
  const local = calendarMs(+y!, +mo!, +d!, +h!, +mi!, leap ? 59 : +s, Number(frac.padEnd(3, '0')));
  const time = instantOf(local, offsetMinutes(designator), leap);
  return time === undefined ? undefined : new Date(time);
}

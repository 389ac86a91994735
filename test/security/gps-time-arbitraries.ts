// fast-check generators of gpsTime: every format a client may send it in (ISO-8601 with and without
// its optional parts, epoch seconds and milliseconds, as numbers or text), each with the instant it
// means, and the values it must refuse.
import fc from 'fast-check';

export const MAX_GPS_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Epoch values below this are seconds, above it milliseconds (gps-time.ts documents the same split). */
const EPOCH_SECONDS_LIMIT = 1e11;

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** A time of day and date, as written in some zone: its fields from a UTC Date shifted by the offset. */
function calendarText(local: Date, separator: 'T' | ' ', seconds: 'always' | 'when-needed', fraction: boolean): string {
  const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  let time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
  const ms = local.getUTCMilliseconds();
  if (seconds === 'always' || local.getUTCSeconds() !== 0 || ms !== 0) time += `:${pad(local.getUTCSeconds())}`;
  if (fraction && ms !== 0) time += `.${pad(ms, 3).replace(/0+$/, '')}`;
  return `${date}${separator}${time}`;
}

function offsetDesignator(minutes: number, colon: boolean): string {
  const sign = minutes < 0 ? '-' : '+';
  const absolute = Math.abs(minutes);
  return `${sign}${pad(Math.floor(absolute / 60))}${colon ? ':' : ''}${pad(absolute % 60)}`;
}

/** The text as sent, and with the spaces a client may leave around it. */
export const spaced = (text: string) => fc.constantFrom(text, ` ${text}`, `${text} `, `  ${text}\t`);

export interface Rendered<T> {
  /** What is sent: a JSON value, or text for a form. */
  input: T;
  /** The instant it denotes, in milliseconds. */
  ms: number;
}

/** Every accepted gpsTime format, each with an instant of `instant` that it denotes. */
function renderingsOf(instant: fc.Arbitrary<number>): fc.Arbitrary<Rendered<string | number>> {
  return fc.oneof(
    instant.map((ms) => ({ input: new Date(ms).toISOString(), ms })),
    fc
      .record({ ms: instant, offset: fc.integer({ min: -14 * 60, max: 14 * 60 }), colon: fc.boolean(), fraction: fc.boolean() })
      .filter(({ ms, offset, fraction }) => {
        const local = new Date(ms + offset * 60_000);
        // The local time must have a four-digit year, and fractions are only written when they are kept.
        return local.getUTCFullYear() >= 1 && local.getUTCFullYear() <= 9999 && (fraction || ms % 1000 === 0);
      })
      .map(({ ms, offset, colon, fraction }) => ({
        input: `${calendarText(new Date(ms + offset * 60_000), 'T', 'when-needed', fraction)}${offset === 0 && colon ? 'Z' : offsetDesignator(offset, colon)}`,
        ms,
      })),
    instant.map((ms) => ms - (ms % 1000)).map((ms) => ({ input: calendarText(new Date(ms), ' ', 'always', false), ms })),
    instant
      .filter((ms) => ms / 1000 < EPOCH_SECONDS_LIMIT)
      .chain((ms) =>
        fc.constantFrom<Rendered<string | number>>(
          { input: ms / 1000, ms },
          { input: (ms / 1000).toFixed(3), ms },
          { input: String(Math.floor(ms / 1000)), ms: ms - (ms % 1000) },
        ),
      ),
    instant
      .filter((ms) => ms >= EPOCH_SECONDS_LIMIT)
      .chain((ms) => fc.constantFrom<Rendered<string | number>>({ input: ms, ms }, { input: String(ms), ms })),
    // A leap second denotes the first second of the next day.
    fc.constantFrom<Rendered<string | number>>(
      { input: '2016-12-31T23:59:60Z', ms: Date.UTC(2017, 0, 1) },
      { input: '2016-12-31 23:59:60', ms: Date.UTC(2017, 0, 1) },
      { input: '2012-07-01T01:59:60.5+02:00', ms: Date.UTC(2012, 6, 1, 0, 0, 0, 500) },
    ),
  );
}

const instant = fc.integer({ min: 0, max: MAX_GPS_MS });

/** Every accepted gpsTime format, over every instant the parser accepts. */
export const gpsTimeRendering = renderingsOf(instant);

/**
 * The gpsTimes a gateway stores: every format, up to the present. Later ones are refused for the
 * gateway's MAX_FUTURE_SKEW, which the API tests check on their own.
 */
export const storableGpsTimeRendering = renderingsOf(fc.integer({ min: 0, max: Date.now() }));

/** gpsTime values that must be refused, whatever else the body holds. */
export const invalidGpsTime: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '',
    'yesterday',
    'now',
    '2026-11-22',
    '2026-11-22T08:30:00',
    '2026-11-22 08:30',
    '2026-02-30 10:00:00',
    '2026-11-22T24:00:00Z',
  ),
  fc.constantFrom(
    '2026-11-22T08:30:00+24:00',
    '2026-11-22T08:30:00.1234Z',
    '22/11/2026 08:30',
    '0x6740',
    '1e9',
    '-1700000000',
    '1969-12-31T23:59:59Z',
  ),
  fc.constantFrom('2026-11-22T08:30:00+14:01', '2026-11-22T08:30:00-15:00', '2026-11-22T08:30:00+2359', '2026-11-22T08:30:60Z'),
  fc.constantFrom(-1, Number.MAX_SAFE_INTEGER, true, null, { seconds: 1 }, [1700000000]),
  instant.map((ms) => new Date(ms).toISOString().replace('Z', '')),
);

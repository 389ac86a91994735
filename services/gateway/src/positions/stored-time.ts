// The timestamps of the position reads, taken as the text PostgreSQL sends rather than as JS Dates.
// pg's own parser (a regular expression, a Date, then toISOString) costs a few microseconds per value, and
// a history page holds two per position; in a session whose TimeZone is UTC, as the servers this
// service runs on are set, the ISO-8601 answer is the text rearranged. Any other session's text takes
// pg's parser, so the answer is the same whatever the server's TimeZone.
import { types, type CustomTypesConfig } from 'pg';

const TIMESTAMPTZ_OID = 1184;
const parseTimestamptz = types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;

/** Query types under which a timestamptz column arrives as PostgreSQL's text; every other type as pg parses it. */
export const timestampsAsText: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID ? (text: string) => text : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};

/** A timestamptz in a UTC session, e.g. `2026-11-22 08:30:00.12+00`: date, time, fraction of 1 to 6 digits. */
const utcText = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;
const fraction = /\.(\d{1,6})/;

/** The six digits of the fraction of a second, zeros added: `12` is 120000 microseconds. */
function fractionDigits(text: string | undefined): string {
  return (text ?? '').padEnd(6, '0');
}

/**
 * The instant as toISOString writes it, e.g. `2026-11-22T08:30:00.120Z`: milliseconds, the microseconds
 * beyond them dropped, as a JS Date drops them.
 */
export function isoMillis(text: string): string {
  const utc = utcText.exec(text);
  if (utc) return `${utc[1]}T${utc[2]}.${fractionDigits(utc[3]).slice(0, 3)}Z`;
  return parseTimestamptz(text).toISOString();
}

/** The exact instant in microseconds since the epoch, which a JS Date cannot hold. */
export function epochMicros(text: string): bigint {
  // A UTC offset is whole seconds, so the fraction PostgreSQL writes is the instant's fraction.
  const beyondMillis = fractionDigits(fraction.exec(text)?.[1]).slice(3);
  return BigInt(Date.parse(isoMillis(text))) * 1000n + BigInt(beyondMillis);
}

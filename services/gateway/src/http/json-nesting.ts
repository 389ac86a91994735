// How deep a JSON body nests, found from its bytes before it is parsed. No route's body nests deeper than
// a dozen levels (a batch of positions whose attributes nest as deep as they may), while JSON.parse of a
// body nested a hundred thousand deep takes some thirty times as long as a flat body of the same size:
// one client posting such bodies slowed every other client's writes on the gateway by seconds. A body
// nested deeper than any route takes is refused before the parser sees it.
import iconv from 'iconv-lite';

/** The deepest arrays and objects may nest in a JSON body. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether the UTF-8 JSON text nests arrays and objects deeper than `max`, brackets inside strings not
 * counted. `lines`: NDJSON, a value per line, so the count starts again at each line break (a JSON string
 * holds none unescaped). Stops at the first level past `max`. Text that is not JSON is counted as far as
 * it goes; the parser refuses it after.
 */
export function nestsDeeperThan(text: Uint8Array, max: number, lines = false): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const byte = text[index]!;
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
      else if (byte === NEWLINE && lines) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth += 1;
      if (depth > max) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth -= 1;
    } else if (byte === NEWLINE && lines) {
      depth = 0;
    }
  }
  return false;
}

/**
 * The body as UTF-8: as it came in that charset, or decoded as the parser will decode it (a JSON body may
 * come in UTF-16 or UTF-32, whose bytes hold brackets only as parts of wider code units).
 */
export function asUtf8(body: Buffer, charset: string): Buffer {
  return isUtf8Charset(charset) ? body : Buffer.from(iconv.decode(body, charset), 'utf8');
}

/** Whether a body's charset, as body-parser reads it from Content-Type, is UTF-8. */
export function isUtf8Charset(charset: string): boolean {
  return /^utf-?8$/i.test(charset);
}

// A name a person gives a thing and reads in lists (a vehicle group's, a device's): text as typed, with
// nothing that hides, reorders or breaks what a list shows, counted in characters as a reader counts them.
import { z } from 'zod';
import { minLength } from './checks';
import { typeError } from './issue-wording';

/**
 * Characters that draw nothing: white space, the default-ignorable ones (zero-width spaces and joiners,
 * the Hangul fillers, variation selectors, the soft hyphen) and the blank braille pattern. A name made
 * only of them would show as empty in every list.
 */
const visibleCharacter = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/u;

function codePoints(text: string, limit: number): number {
  let count = 0;
  // Iterating a string yields code points; a name far over the limit stops being counted at the limit.
  for (const _ of text) if (++count > limit) break;
  return count;
}

/** A trimmed name of 1 to `maxCharacters` characters (code points). */
export function displayName(maxCharacters: number) {
  return (
    z
      .string({ error: typeError('Expected a string') })
      .trim()
      .check(minLength(1, 'Must not be empty'))
      // C0 (NUL, tab, line breaks), DEL and C1: none of them is text a person typed, PostgreSQL refuses
      // NUL, and U+0085 is a line break to some readers.
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'Must not contain control characters')
      // A lone surrogate (JSON "\ud800") is not text: PostgreSQL would store U+FFFD in its place.
      .regex(/^\P{Cs}*$/u, 'Must be valid Unicode text')
      // Embeddings, overrides and isolates reorder what follows them: "Trucks\u202Eliated" shows as another name.
      .regex(/^[^\u202a-\u202e\u2066-\u2069]*$/, 'Must not contain bidirectional control characters')
      // What zod's string checks cannot say. The issues keep the codes those checks would give.
      .superRefine((name, ctx) => {
        // An empty name is already refused as empty.
        if (name.length > 0 && !visibleCharacter.test(name)) {
          ctx.addIssue({ code: 'invalid_format', format: 'regex', message: 'Must contain a visible character' });
        }
        // Counted in characters (code points), as PostgreSQL and a reader count them, not in UTF-16
        // units: an emoji is one character.
        if (codePoints(name, maxCharacters) > maxCharacters) {
          ctx.addIssue({
            code: 'too_big',
            origin: 'string',
            maximum: maxCharacters,
            inclusive: true,
            message: `Must be at most ${maxCharacters} characters`,
          });
        }
      })
  );
}

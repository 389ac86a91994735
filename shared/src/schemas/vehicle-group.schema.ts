// The vehicle-group message: the HTTP body a fleet app sends and the Kafka command the group-writer reads.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { maxLength, minLength } from './checks';
import { typeError } from './issue-wording';

export const VEHICLE_GROUP_NAME_MAX_LENGTH = 200;
export const VEHICLE_IDS_MAX = 10_000;
/** The longest Idempotency-Key a client may send, as the API documents it. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

// A key (the client's, or one the gateway generated) is kept per subject: the command id is a digest of
// the token's subject and the key, so two clients sending the same key never reach each other's group.
// The prefix keeps these ids apart from the `key:` and `gen:` ids of groups stored before keys had owners.
const COMMAND_ID_PREFIX = 'owned:';

/** The command id under which a group is stored: the same subject and key always land on the same group. */
export function commandIdFor(subject: string, idempotencyKey: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([subject, idempotencyKey]))
    .digest('base64url');
  return `${COMMAND_ID_PREFIX}${digest}`;
}

/**
 * Characters that draw nothing: white space, the default-ignorable ones (zero-width spaces and joiners,
 * the Hangul fillers, variation selectors, the soft hyphen) and the blank braille pattern. A name made
 * only of them would show as empty in every list.
 */
const visibleCharacter = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/u;

const vehicleGroupName = z
  .string({ error: typeError('Expected a string') })
  .trim()
  .check(minLength(1, 'Must not be empty'))
  // C0, DEL and C1: none of them is text a person typed, and U+0085 is a line break to some readers.
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
    if (codePoints(name) > VEHICLE_GROUP_NAME_MAX_LENGTH) {
      ctx.addIssue({
        code: 'too_big',
        origin: 'string',
        maximum: VEHICLE_GROUP_NAME_MAX_LENGTH,
        inclusive: true,
        message: `Must be at most ${VEHICLE_GROUP_NAME_MAX_LENGTH} characters`,
      });
    }
  });

function codePoints(text: string): number {
  let count = 0;
  // Iterating a string yields code points; a name far over the limit stops being counted at the limit.
  for (const _ of text) if (++count > VEHICLE_GROUP_NAME_MAX_LENGTH) break;
  return count;
}

/**
 * Each id's issues, at its index, as the API has always reported them: an id that is not a number is
 * "Expected an integer" and nothing more; a number may break several rules at once (-1.5 is no integer
 * and not positive; JSON's 1e999, read as Infinity, is no integer and too large). A loop over the ids
 * rather than a zod array of them: that reports the array's length only after its elements, and costs
 * several times more per id.
 */
function checkIds(ids: unknown[], ctx: z.core.$RefinementCtx<unknown[]>): void {
  for (let index = 0; index < ids.length; index++) {
    const id = ids[index];
    const path = [index];
    if (typeof id !== 'number' || Number.isNaN(id)) {
      ctx.addIssue({ code: 'invalid_type', expected: 'int', message: 'Expected an integer', path });
      continue;
    }
    if (!Number.isInteger(id)) {
      ctx.addIssue({ code: 'invalid_type', expected: 'int', message: 'Expected an integer', path });
    }
    if (!(id > 0)) {
      ctx.addIssue({ code: 'too_small', origin: 'number', minimum: 0, inclusive: false, message: 'Must be a positive integer', path });
    }
    if (id > Number.MAX_SAFE_INTEGER) {
      ctx.addIssue({ code: 'too_big', origin: 'number', maximum: Number.MAX_SAFE_INTEGER, inclusive: true, message: 'Is too large', path });
    }
  }
}

// An array over the limit is cut to one element past it before its elements are checked: it is refused
// all the same, and a 1 MB body of 150,000 bad ids costs 10,001 checks instead of a second of CPU. Its
// length is reported before its ids.
const vehicleIds = z.preprocess(
  (value) => (Array.isArray(value) && value.length > VEHICLE_IDS_MAX ? value.slice(0, VEHICLE_IDS_MAX + 1) : value),
  z
    .array(z.unknown(), { error: typeError('Expected an array of integers') })
    .check(maxLength(VEHICLE_IDS_MAX, `Must contain at most ${VEHICLE_IDS_MAX} ids`))
    .superRefine(checkIds)
    // Reached only when every id passed.
    .transform((ids) => ids as number[]),
);

export const vehicleGroupRequestSchema = z.object({
  vehicleGroupName,
  // Duplicates are collapsed, keeping the order in which ids were first given.
  vehicleIds: vehicleIds.transform((ids) => [...new Set(ids)]),
});

export const vehicleGroupCommandSchema = z.object({
  // Room for the ids of earlier releases (`key:` and a key of the full documented length), which may
  // still be waiting in the topic when this release starts.
  commandId: z.string().check(minLength(1), maxLength('key:'.length + IDEMPOTENCY_KEY_MAX_LENGTH)),
  vehicleGroupName,
  vehicleIds,
});

export type VehicleGroupCommand = z.infer<typeof vehicleGroupCommandSchema>;

// The vehicle-group message: the HTTP body a fleet app sends and the Kafka command the group-writer reads.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { maxLength, minLength } from './checks';
import { displayName } from './display-name';
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

const vehicleGroupName = displayName(VEHICLE_GROUP_NAME_MAX_LENGTH);

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

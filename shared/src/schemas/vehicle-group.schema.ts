// The vehicle-group message: the HTTP body a fleet app sends and the Kafka command the group-writer reads.
import { z } from 'zod';

export const VEHICLE_GROUP_NAME_MAX_LENGTH = 200;
export const VEHICLE_IDS_MAX = 10_000;

const vehicleGroupName = z
  .string({ required_error: 'Required', invalid_type_error: 'Expected a string' })
  .trim()
  .min(1, 'Must not be empty')
  .max(VEHICLE_GROUP_NAME_MAX_LENGTH, `Must be at most ${VEHICLE_GROUP_NAME_MAX_LENGTH} characters`)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'Must not contain control characters')
  // A lone surrogate (JSON "\ud800") is not text: PostgreSQL would store U+FFFD in its place.
  .regex(/^\P{Cs}*$/u, 'Must be valid Unicode text');

const vehicleId = z
  .number({ invalid_type_error: 'Expected an integer' })
  .int('Expected an integer')
  .positive('Must be a positive integer')
  .max(Number.MAX_SAFE_INTEGER, 'Is too large');

// An array over the limit is cut to one element past it before its elements are checked: it is refused
// all the same, and a 1 MB body of 150,000 bad ids costs 10,001 checks instead of a second of CPU.
const vehicleIds = z.preprocess(
  (value) => (Array.isArray(value) && value.length > VEHICLE_IDS_MAX ? value.slice(0, VEHICLE_IDS_MAX + 1) : value),
  z
    .array(vehicleId, { required_error: 'Required', invalid_type_error: 'Expected an array of integers' })
    .max(VEHICLE_IDS_MAX, `Must contain at most ${VEHICLE_IDS_MAX} ids`),
);

export const vehicleGroupRequestSchema = z.object({
  vehicleGroupName,
  // Duplicates are collapsed, keeping the order in which ids were first given.
  vehicleIds: vehicleIds.transform((ids) => [...new Set(ids)]),
});

export const vehicleGroupCommandSchema = z.object({
  commandId: z.string().min(1).max(200),
  vehicleGroupName,
  vehicleIds,
});

export type VehicleGroupCommand = z.infer<typeof vehicleGroupCommandSchema>;

// The write bodies as the wire carries them, for OpenAPI: the shared schemas the routes validate with,
// each coerced field restated as what a JSON body or a form may send.
import { booleanTextPattern, numericTextPattern } from '@fleet/shared/schemas/coercion';
import { tripLocationRequestSchema } from '@fleet/shared/schemas/trip-location.schema';
import { VEHICLE_GROUP_NAME_MAX_LENGTH, VEHICLE_IDS_MAX, vehicleGroupRequestSchema } from '@fleet/shared/schemas/vehicle-group.schema';
import { z } from './openapi-zod';
import { FORM_FIELDS_MAX } from './write-routes';

/**
 * zod-to-openapi describes a z.preprocess() by the schema it feeds and a .pipe() by its input, so the
 * shared trip schema, generated as is, would claim that latitude is an unbounded number (the numeric
 * strings a form sends are accepted too) and would leave gpsTime untyped. Each coerced field is
 * therefore restated as what the shared preprocessor accepts on the wire, keeping the bounds of its
 * output schema; the field list and the plain fields still come from the shared schema, so a field
 * added there appears here.
 */
function wireForm(field: z.ZodType): z.ZodType {
  if (field instanceof z.ZodOptional) return wireForm(field.unwrap() as z.ZodType).optional();
  if (field instanceof z.ZodPipe && field.in instanceof z.ZodPreprocess) {
    return accepted(field.in.out as z.ZodType, field.out as z.ZodType);
  }
  if (field instanceof z.ZodPreprocess) return accepted(field.out as z.ZodType, field.out as z.ZodType);
  return field;
}

/** `coerced` is the type the preprocessor produces; `checked` carries the bounds applied after it. */
function accepted(coerced: z.ZodType, checked: z.ZodType): z.ZodType {
  if (coerced instanceof z.ZodNumber) {
    const numericText = z
      .string()
      .regex(new RegExp(numericTextPattern))
      .openapi({ description: 'a numeric string, within the same bounds' });
    return z.union([checked, numericText]);
  }
  if (coerced instanceof z.ZodBoolean) {
    return z.union([
      checked,
      z.number().int().min(0).max(1),
      z.string().regex(new RegExp(booleanTextPattern)).openapi({ description: 'true, false, 1 or 0, in any letter case' }),
    ]);
  }
  return checked;
}

const gpsTime = z
  .union([
    z.string().openapi({
      description:
        'ISO-8601 with an offset of at most ±14:00 or Z (e.g. 2026-11-22T08:30:00+07:00), "YYYY-MM-DD HH:mm:ss" in UTC, or epoch digits; ' +
        'a leap second (23:59:60 UTC) is read as the first second of the next day',
    }),
    z.number().min(0).openapi({ description: 'epoch seconds (below 1e11) or milliseconds' }),
  ])
  .openapi({
    description:
      'When the device took the position; ambiguous local times without an offset are refused, and so is a time more than ' +
      "MAX_FUTURE_SKEW (24 hours unless configured) ahead of the server's clock",
  });

export const tripLocationWire = tripLocationRequestSchema
  .extend({
    ...Object.fromEntries(Object.entries(tripLocationRequestSchema.shape).map(([name, field]) => [name, wireForm(field)])),
    gpsTime,
  })
  .openapi({
    description: `A position report; JSON or form-urlencoded, unknown fields are ignored (a form may hold at most ${FORM_FIELDS_MAX} fields)`,
  });

/**
 * The name's length is checked in a refinement, since zod's max() counts UTF-16 units; JSON Schema's
 * maxLength counts characters as the refinement does, so it is restated here. So are the ids, which the
 * shared schema checks one by one after their count, in a refinement too.
 */
export const vehicleGroupWire = vehicleGroupRequestSchema.extend({
  vehicleGroupName: vehicleGroupRequestSchema.shape.vehicleGroupName.meta({
    maxLength: VEHICLE_GROUP_NAME_MAX_LENGTH,
    description: 'Trimmed; at least one visible character, no control or bidirectional control characters',
  }),
  vehicleIds: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).max(VEHICLE_IDS_MAX),
});

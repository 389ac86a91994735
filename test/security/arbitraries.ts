// fast-check generators for the property tests, each value paired with what it means. Valid values
// come in every representation a client may use (numbers or numeric text, booleans or boolean words,
// every gpsTime format) together with the meaning they must be stored with; invalid values come from
// pools of what each field must refuse. The meanings are written here independently of the schemas.
import fc from 'fast-check';
import { invalidGpsTime, spaced, storableGpsTimeRendering } from './gps-time-arbitraries';

export interface FieldValue {
  /** The value to send in a JSON body. */
  json: unknown;
  /** The text to send in a form body. */
  form: string;
  /** What it must be stored as; undefined for a value that must be refused. */
  meaning?: number | boolean | string;
}

/** A finite number in [min, max], as a number or as text of many shapes, with the number it means. */
function numberIn(min: number, max: number, integer = false): fc.Arbitrary<FieldValue> {
  const value = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return value
    .chain((number) => {
      const meaning = number + 0;
      const texts = [String(number), integer ? String(number) : number.toExponential(), integer ? `+${number}` : number.toFixed(6)];
      return fc.oneof(
        fc.constant<FieldValue>({ json: number, form: String(number), meaning }),
        fc
          .constantFrom(...texts)
          .chain((text) => spaced(text).map<FieldValue>((padded) => ({ json: padded, form: padded, meaning: Number(text) + 0 }))),
      );
    })
    .filter((value) => typeof value.meaning === 'number' && value.meaning >= min && value.meaning <= max);
}

const booleanValue: fc.Arbitrary<FieldValue> = fc.boolean().chain((meaning) =>
  fc.oneof(
    fc.constant<FieldValue>({ json: meaning, form: String(meaning), meaning }),
    fc.constant<FieldValue>({ json: meaning ? 1 : 0, form: meaning ? '1' : '0', meaning }),
    fc
      .constantFrom(String(meaning), String(meaning).toUpperCase(), meaning ? 'True' : 'False', meaning ? '1' : '0')
      .chain((word) => spaced(word).map<FieldValue>((text) => ({ json: text, form: text, meaning }))),
  ),
);

const notANumber: fc.Arbitrary<FieldValue> = fc
  .constantFrom('', 'abc', '0x10', 'Infinity', 'NaN', '1,5', '1.2.3', '--1', "1' OR '1'='1")
  .map((text) => ({ json: text, form: text }));

const notABoolean: fc.Arbitrary<FieldValue> = fc
  .constantFrom('yes', 'no', 'on', '2', '-1', 'truee', '', "true' --")
  .map((text) => ({ json: text, form: text }));

/** Out of range, or of another type in JSON (a form can only carry text). */
function invalidNumber(outOfRange: number[], integer = false): fc.Arbitrary<FieldValue> {
  return fc.oneof(
    notANumber,
    fc.constantFrom(...outOfRange, ...(integer ? [1.5, -0.5] : [])).map((number) => ({ json: number, form: String(number) })),
    fc.constantFrom<unknown>(true, null, [1], { value: 1 }).map((json) => ({ json, form: 'x' })),
  );
}

interface FieldSpec {
  required: boolean;
  valid: fc.Arbitrary<FieldValue>;
  invalid: fc.Arbitrary<FieldValue>;
}

let deviceCounter = 0;
/** Printable ASCII without spaces, made unique per run so that every accepted trip is a new row. */
const imeiValue: fc.Arbitrary<FieldValue> = fc
  .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 12 })
  .map((text) => {
    deviceCounter += 1;
    const imei = `${text}~${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}${deviceCounter.toString(36)}`.slice(0, 32);
    return { json: imei, form: imei, meaning: imei };
  });

export const tripFields: Record<string, FieldSpec> = {
  imei: {
    required: true,
    valid: imeiValue,
    invalid: fc.oneof(
      fc.constantFrom('', 'x'.repeat(33), 'has space', 'tab\there', 'é', '🚚').map((text) => ({ json: text, form: text })),
      fc.constantFrom<unknown>(356938035643809, null, ['a']).map((json) => ({ json, form: '' })),
    ),
  },
  gpsTime: {
    required: true,
    valid: storableGpsTimeRendering.map(({ input, ms }) => ({ json: input, form: String(input), meaning: new Date(ms).toISOString() })),
    invalid: invalidGpsTime.map((json) => ({ json, form: typeof json === 'string' ? json : 'x' })),
  },
  latitude: { required: true, valid: numberIn(-90, 90), invalid: invalidNumber([-90.0001, 90.5, 1e9]) },
  longitude: { required: true, valid: numberIn(-180, 180), invalid: invalidNumber([-180.5, 181]) },
  speed: { required: true, valid: numberIn(0, 1e6), invalid: invalidNumber([-1, -0.001]) },
  ignition: { required: true, valid: booleanValue, invalid: notABoolean },
  angle: { required: false, valid: numberIn(0, 360), invalid: invalidNumber([-1, 360.5]) },
  satellite: { required: false, valid: numberIn(0, 2_147_483_647, true), invalid: invalidNumber([-1, 2_147_483_648], true) },
  door1: { required: false, valid: booleanValue, invalid: notABoolean },
  door2: { required: false, valid: booleanValue, invalid: notABoolean },
  temp: { required: false, valid: numberIn(-1e6, 1e6), invalid: notANumber },
  fuel_percentage: { required: false, valid: numberIn(0, 100), invalid: invalidNumber([-0.1, 100.1]) },
};

export interface TripCase {
  values: Record<string, FieldValue>;
  /** Fields sent with a value that must be refused, or required and left out. */
  invalid: string[];
}

/** A trip whose fields are all valid (optional ones present or not). */
export const validTrip: fc.Arbitrary<TripCase> = fc
  .record(
    Object.fromEntries(
      Object.entries(tripFields).map(([name, spec]) => [name, spec.required ? spec.valid : fc.option(spec.valid, { nil: undefined })]),
    ) as Record<string, fc.Arbitrary<FieldValue | undefined>>,
  )
  .map((values) => ({
    values: Object.fromEntries(Object.entries(values).filter((entry): entry is [string, FieldValue] => entry[1] !== undefined)),
    invalid: [],
  }));

/** A valid trip with one to three fields made invalid: a refused value, or a required field left out. */
export const invalidTrip: fc.Arbitrary<TripCase> = validTrip.chain((trip) =>
  fc.shuffledSubarray(Object.keys(tripFields), { minLength: 1, maxLength: 3 }).chain((broken) =>
    fc
      .tuple(
        ...broken.map((name) =>
          tripFields[name]!.required ? fc.oneof(tripFields[name]!.invalid, fc.constant(undefined)) : tripFields[name]!.invalid,
        ),
      )
      .map((replacements) => {
        const values = { ...trip.values };
        broken.forEach((name, index) => {
          const replacement = replacements[index];
          if (replacement === undefined) delete values[name];
          else values[name] = replacement;
        });
        return { values, invalid: [...broken].sort() };
      }),
  ),
);

export function jsonBody(trip: TripCase): Record<string, unknown> {
  return Object.fromEntries(Object.entries(trip.values).map(([name, value]) => [name, value.json]));
}

export function formBody(trip: TripCase): string {
  return new URLSearchParams(Object.entries(trip.values).map(([name, value]): [string, string] => [name, value.form])).toString();
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]*$/u;

export interface GroupCase {
  body: Record<string, unknown>;
  /** The stored name and the set of member ids, or undefined when the body must be refused. */
  meaning?: { name: string; ids: number[] };
  invalid: string[];
}

const injections = ["'; DROP TABLE vehicle_groups; --", "Robert'); DELETE FROM vehicle_group_members; --", '$$ OR 1=1 $$', '\\x27'];

const validName = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
    fc.constantFrom(...injections),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 200 }),
    fc.constant('\u{1F69A}'.repeat(200)),
  )
  .filter((name) => !CONTROL.test(name) && !BIDI_CONTROL.test(name) && !INVISIBLE_ONLY.test(name) && [...name.trim()].length <= 200);

const invalidName: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('', '   ', 'tab\there', 'line\nbreak', 'nul\u0000', 'bell\u0007', 'lone \ud800 surrogate', 'x'.repeat(201)),
  fc.constantFrom('\u{1F69A}'.repeat(201), 'next\u0085line', 'bidi \u202e override', 'bidi \u2066 isolate', '\u200b\u200d\ufeff'),
  fc.constantFrom<unknown>(42, null, true, ['name'], { name: 'x' }),
);

const vehicleId = fc.oneof(
  fc.integer({ min: 1, max: 1000 }),
  fc.maxSafeNat().filter((id) => id > 0),
);

export const validGroup: fc.Arbitrary<GroupCase> = fc
  .record({ name: validName, ids: fc.array(vehicleId, { maxLength: 40 }) })
  .map(({ name, ids }) => ({
    body: { vehicleGroupName: name, vehicleIds: ids },
    meaning: { name: name.trim(), ids: [...new Set(ids)].sort((a, b) => a - b) },
    invalid: [],
  }));

export const invalidGroup: fc.Arbitrary<GroupCase> = fc.oneof(
  fc.record({ name: invalidName, ids: fc.array(vehicleId, { maxLength: 5 }) }).map(({ name, ids }) => ({
    body: { vehicleGroupName: name, vehicleIds: ids },
    invalid: ['vehicleGroupName'],
  })),
  fc
    .record({
      name: validName,
      ids: fc.array(vehicleId, { maxLength: 5 }),
      bad: fc.constantFrom<unknown>(0, -1, 1.5, '7', null, 2 ** 53, Number.MAX_VALUE, true),
      at: fc.nat(5),
    })
    .map(({ name, ids, bad, at }) => {
      const index = Math.min(at, ids.length);
      const withBad = [...ids.slice(0, index), bad, ...ids.slice(index)];
      return { body: { vehicleGroupName: name, vehicleIds: withBad }, invalid: [`vehicleIds.${index}`] };
    }),
  fc
    .constantFrom<unknown>('1,2', 7, null, { 0: 1 })
    .map((ids) => ({ body: { vehicleGroupName: 'Valid name', vehicleIds: ids }, invalid: ['vehicleIds'] })),
);

import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  VEHICLE_IDS_MAX,
  commandIdFor,
  vehicleGroupCommandSchema,
  vehicleGroupRequestSchema,
} from './vehicle-group.schema';

function errorPaths(input: unknown): string[] {
  const result = vehicleGroupRequestSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
}

describe('vehicleGroupRequestSchema', () => {
  test('trims the name and collapses duplicate ids in first-seen order', () => {
    expect(vehicleGroupRequestSchema.parse({ vehicleGroupName: '  Cold chain ', vehicleIds: [3, 1, 3, 2, 1] })).toEqual({
      vehicleGroupName: 'Cold chain',
      vehicleIds: [3, 1, 2],
    });
  });

  test(`accepts exactly ${VEHICLE_IDS_MAX} ids and refuses one more`, () => {
    const ids = Array.from({ length: VEHICLE_IDS_MAX }, (_, i) => i + 1);
    expect(errorPaths({ vehicleGroupName: 'g', vehicleIds: ids })).toEqual([]);
    expect(errorPaths({ vehicleGroupName: 'g', vehicleIds: [...ids, VEHICLE_IDS_MAX + 1] })).toEqual(['vehicleIds']);
  });

  test.each([
    ['vehicleGroupName', { vehicleGroupName: '   ' }],
    ['vehicleGroupName', { vehicleGroupName: 'x'.repeat(201) }],
    ['vehicleGroupName', { vehicleGroupName: 'tab\there' }],
    ['vehicleGroupName', { vehicleGroupName: 42 }],
    ['vehicleIds.0', { vehicleIds: ['1'] }],
    ['vehicleIds.1', { vehicleIds: [1, 0] }],
    ['vehicleIds.0', { vehicleIds: [-4] }],
    ['vehicleIds.0', { vehicleIds: [1.5] }],
    ['vehicleIds.0', { vehicleIds: [2 ** 53] }],
    ['vehicleIds', { vehicleIds: '1,2' }],
  ])('refuses a bad %s', (path, override) => {
    expect(errorPaths({ vehicleGroupName: 'Cold chain', vehicleIds: [1], ...override })).toEqual([path]);
  });
});

describe('vehicleGroupCommandSchema', () => {
  test(`passes the command id of every key from 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, whatever its subject`, () => {
    for (const length of [1, IDEMPOTENCY_KEY_MAX_LENGTH - 1, IDEMPOTENCY_KEY_MAX_LENGTH]) {
      const subject = JSON.stringify(['sub', 'https://issuer.example', 's'.repeat(2000)]);
      const command = { commandId: commandIdFor(subject, 'k'.repeat(length)), vehicleGroupName: 'Cold chain', vehicleIds: [1] };
      expect(vehicleGroupCommandSchema.safeParse(command).success).toBe(true);
    }
  });
});

describe('commandIdFor', () => {
  test('gives the same key of two subjects two command ids, and the same subject and key one', () => {
    expect(commandIdFor('alice', 'k-1')).toBe(commandIdFor('alice', 'k-1'));
    expect(commandIdFor('alice', 'k-1')).not.toBe(commandIdFor('bob', 'k-1'));
    // The parts are kept apart, so no subject and key can be moved across their boundary.
    expect(commandIdFor('ab', 'c')).not.toBe(commandIdFor('a', 'bc'));
  });
});

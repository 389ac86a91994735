import { DatabaseError } from 'pg';
import { z } from 'zod';
import { isDatabaseUnavailable } from '@fleet/shared/db/pg-errors';
import { AppError } from '@fleet/shared/errors';
import { generateApiKey, hashApiKey } from '../../services/gateway/src/api-keys/api-key-hash';
import { parseApiKeyArgs } from '../../services/gateway/src/cli/api-key';
import { csvToRows, parseCategoryFile } from '../../services/gateway/src/categories/category-file';
import { toCategory } from '../../services/gateway/src/categories/category-store';
import { CategoryIdError, categoryBody, invalidIdBody, parseCategoryId } from '../../services/gateway/src/categories/get-category';
import { CategoryImportError, validateCategoryRows } from '../../services/gateway/src/categories/import-categories';

const ID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';

describe('row conversion', () => {
  test('numeric temperatures, which pg returns as strings, become numbers; null stays null', () => {
    expect(toCategory({ id: ID, name: 'Frozen', min_temperature: '-25.50', max_temperature: '0' })).toEqual({
      id: ID,
      name: 'Frozen',
      min_temperature: -25.5,
      max_temperature: 0,
    });
    expect(toCategory({ id: ID, name: 'Dry', min_temperature: null, max_temperature: '12' })).toMatchObject({
      min_temperature: null,
      max_temperature: 12,
    });
  });

  test("the body holds the category's fields under data, in the interface's order", () => {
    expect(categoryBody({ id: ID, name: 'Frozen', min_temperature: -25.5, max_temperature: null })).toBe(
      `{"data":{"id":"${ID}","name":"Frozen","min_temperature":-25.5,"max_temperature":null}}`,
    );
  });
});

describe('the id of a read', () => {
  test('a UUID in any case is accepted and lower-cased', () => {
    expect(parseCategoryId(ID.toUpperCase())).toBe(ID);
  });

  test.each([
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ['the max UUID', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'],
    ['version 7, variant bits 110', '3f2504e0-4f89-71d3-ca0c-0305e82c3301'],
    ['version 0, variant bits 0', '3f2504e0-4f89-01d3-0a0c-0305e82c3301'],
    ['version 15, variant bits 111', '3f2504e0-4f89-f1d3-fa0c-0305e82c3301'],
  ])('%s is accepted: any 8-4-4-4-12 hexadecimal id is, whatever its version and variant bits', (_label, id) => {
    expect(parseCategoryId(id)).toBe(id.toLowerCase());
  });

  const invalidUuid = (received: string) => ({
    errors: { id: ['Invalid uuid'] },
    errors_v2: {
      formatted: { _errors: [], id: { _errors: ['Invalid uuid'] } },
      issues: [{ code: 'invalid_string', expected: 'uuid', message: 'Invalid uuid', path: ['id'], received }],
    },
    message: 'Invalid product category id: it must be a UUID',
  });

  const wrongType = (message: string, received: string) => ({
    errors: { id: [message] },
    errors_v2: {
      formatted: { _errors: [], id: { _errors: [message] } },
      issues: [{ code: 'invalid_type', expected: 'string', message, path: ['id'], received }],
    },
    message: 'Invalid product category id: it must be a UUID',
  });

  test.each([
    ['a digit short', '3f2504e0-4f89-11d3-9a0c-0305e82c330', invalidUuid('3f2504e0-4f89-11d3-9a0c-0305e82c330')],
    ['in braces', `{${ID}}`, invalidUuid(`{${ID}}`)],
    ['followed by a line break', `${ID}\n`, invalidUuid(`${ID}\n`)],
    ['empty', '', invalidUuid('')],
    ['absent', undefined, wrongType('Required', 'undefined')],
    ['null', null, wrongType('Expected string, received null', 'null')],
    ['a number', 42, wrongType('Expected string, received number', 'number')],
    ['an array', ['a'], wrongType('Expected string, received array', 'array')],
  ])('an id %s is answered with exactly this 400 body', (_label, id, body) => {
    let thrown: unknown;
    try {
      parseCategoryId(id);
    } catch (error) {
      thrown = error;
    }
    expect(JSON.stringify((thrown as AppError).toJSON())).toBe(JSON.stringify(body));
  });

  test('a non-UUID throws a 400 whose JSON is exactly the body of section 7.1, without a code', () => {
    let thrown: unknown;
    try {
      parseCategoryId('12345');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CategoryIdError);
    expect((thrown as AppError).category).toBe('invalid');
    expect((thrown as AppError).toJSON()).toEqual({
      errors: { id: ['Invalid uuid'] },
      errors_v2: {
        formatted: { _errors: [], id: { _errors: ['Invalid uuid'] } },
        issues: [{ code: 'invalid_string', expected: 'uuid', message: 'Invalid uuid', path: ['id'], received: '12345' }],
      },
      message: 'Invalid product category id: it must be a UUID',
    });
  });

  test('a type issue keeps the expected and received zod reports', () => {
    const schema = z.object({ id: z.string().uuid() });
    const result = schema.safeParse({ id: 42 });
    if (result.success) throw new Error('expected a failure');
    const body = invalidIdBody(result.error, { id: 42 }) as { errors_v2: { issues: unknown[] } };
    expect(body.errors_v2.issues).toEqual([
      { code: 'invalid_type', expected: 'string', message: 'Expected string, received number', path: ['id'], received: 'number' },
    ]);
  });
});

describe('database errors', () => {
  function databaseError(code: string): DatabaseError {
    const error = new DatabaseError('server says no', 0, 'error');
    error.code = code;
    return error;
  }

  test.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a pool checkout timeout', new Error('timeout exceeded when trying to connect')],
    ['a server shutting down (57P01)', databaseError('57P01')],
    ['too many connections (53300)', databaseError('53300')],
    ['a connection failure (08006)', databaseError('08006')],
    ['a database refusing connections (55000)', databaseError('55000')],
  ])('%s means the database is unavailable', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  test.each([
    ['a missing table (42P01)', databaseError('42P01')],
    ['a bad value (22P02)', databaseError('22P02')],
    ['a lock not available (55P03)', databaseError('55P03')],
    ['a programming error', new TypeError('x is not a function')],
    ['a non-error', 'boom'],
  ])('%s is not an outage', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('CSV import files', () => {
  test('quoted fields hold commas, doubled quotes and line breaks; CRLF and LF end records', () => {
    expect(csvToRows('a,b,c\r\n"x, y","say ""hi""","two\nlines"\n1,,3')).toEqual([
      { a: 'x, y', b: 'say "hi"', c: 'two\nlines' },
      { a: '1', b: '', c: '3' },
    ]);
  });

  test('a byte order mark, blank lines and a final newline add no records, and header names are trimmed', () => {
    expect(csvToRows('\ufeff id , name \n\n1,a\r\n\r\n')).toEqual([{ id: '1', name: 'a' }]);
  });

  test('an unterminated quoted field is an error', () => {
    expect(() => csvToRows('id,name\n1,"open')).toThrow(/^invalid CSV: .*[Qq]uote/);
  });

  test('a record of the wrong width is an error naming its line', () => {
    expect(() => csvToRows('id,name\n1,a\n2\n')).toThrow(/^invalid CSV: .*line 3/);
  });

  test('a JSON import must be an array', () => {
    expect(() => parseCategoryFile('{"id":1}', 'json')).toThrow('must be an array');
    expect(parseCategoryFile('[{"id":1}]', 'json')).toEqual([{ id: 1 }]);
  });
});

describe('import row validation', () => {
  test('temperatures may be numbers, decimal text, empty text, null or absent; ids are lower-cased and names trimmed', () => {
    expect(
      validateCategoryRows([
        { id: ID.toUpperCase(), name: '  Frozen ', min_temperature: ' -25.5 ', max_temperature: '1e1' },
        { id: '3f2504e0-4f89-11d3-9a0c-0305e82c3302', name: 'Dry', min_temperature: '', max_temperature: null },
        { id: '3f2504e0-4f89-11d3-9a0c-0305e82c3303', name: 'Any', max_temperature: 4 },
      ]),
    ).toEqual([
      { id: ID, name: 'Frozen', min_temperature: -25.5, max_temperature: 10 },
      { id: '3f2504e0-4f89-11d3-9a0c-0305e82c3302', name: 'Dry', min_temperature: null, max_temperature: null },
      { id: '3f2504e0-4f89-11d3-9a0c-0305e82c3303', name: 'Any', min_temperature: null, max_temperature: 4 },
    ]);
  });

  test.each([['cold'], ['Infinity'], ['0x10'], [true], [[1]]])('a temperature of %j is refused', (value) => {
    expect(() => validateCategoryRows([{ id: ID, name: 'x', min_temperature: value }])).toThrow(CategoryImportError);
  });

  test('every problem is reported with its row number', () => {
    try {
      validateCategoryRows([{ id: ID, name: 'ok' }, { id: 'x' }, { id: ID, name: 'again' }]);
      throw new Error('expected a failure');
    } catch (error) {
      expect((error as CategoryImportError).problems).toEqual([
        'row 2: id: Invalid uuid',
        'row 2: name: Required',
        `row 3: id: ${ID} is already given in row 1`,
      ]);
    }
  });

  test('a name that is not text is reported as such, and only as such', () => {
    try {
      validateCategoryRows([{ id: ID, name: [] }]);
      throw new Error('expected a failure');
    } catch (error) {
      expect((error as CategoryImportError).problems).toEqual(['row 1: name: Expected string, received array']);
    }
  });
});

describe('API keys', () => {
  test('a generated key is 32 random bytes in base64url and its hash is its SHA-256 digest', () => {
    const key = generateApiKey();
    expect(Buffer.from(key, 'base64url')).toHaveLength(32);
    expect(generateApiKey()).not.toBe(key);
    expect(hashApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('a label is at most 100 characters counted in UTF-16 units: 50 emoji pass, 51 are refused', () => {
    expect(parseApiKeyArgs(['create', '\u{1F511}'.repeat(50)])).toEqual({ name: 'create', label: '\u{1F511}'.repeat(50) });
    expect(parseApiKeyArgs(['create', '\u{1F511}'.repeat(51)])).toEqual({
      problem: expect.stringMatching(/^a label has at most 100 characters\n/),
    });
  });
});

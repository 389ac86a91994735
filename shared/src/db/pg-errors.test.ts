import { DatabaseError } from 'pg';
import { classifyDatabaseError, isStatementFailure } from './pg-errors';

function databaseError(code: string): DatabaseError {
  const error = new DatabaseError('server says no', 0, 'error');
  error.code = code;
  return error;
}

describe('classifyDatabaseError', () => {
  test.each([
    ['a value out of range (22008)', databaseError('22008')],
    ['a NUL byte in text (22021)', databaseError('22021')],
    ['a unique violation (23505)', databaseError('23505')],
    ['a refusal from another realm, known by its code only', { code: '23503', message: 'fk' }],
  ])('%s is refused: retrying cannot help', (_label, error) => {
    expect(classifyDatabaseError(error)).toBe('refused');
  });

  test.each([
    ['a server shutting down (57P01)', databaseError('57P01')],
    ['too many connections (53300)', databaseError('53300')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
  ])('%s is unavailable: a later attempt may pass', (_label, error) => {
    expect(classifyDatabaseError(error)).toBe('unavailable');
  });

  test.each([
    ['a missing table (42P01)', databaseError('42P01')],
    ['a programming error', new TypeError('x is not a function')],
    ['an error of this service, whose code also starts with E', { code: 'E-C1/1-01', message: 'This device is already registered' }],
    ['a non-error', 'boom'],
    ['nothing', undefined],
  ])('%s is neither', (_label, error) => {
    expect(classifyDatabaseError(error)).toBe('other');
  });
});

describe('isStatementFailure', () => {
  test.each([
    ['out of shared memory for its locks (53200)', databaseError('53200')],
    ['a statement too complex (54001)', databaseError('54001')],
    ['a value out of range (22008)', databaseError('22008')],
  ])('%s: retrying the same statement is not known to fix it', (_label, error) => {
    expect(isStatementFailure(error)).toBe(true);
  });

  test.each([
    ['a server shutting down (57P01)', databaseError('57P01')],
    ['a full disk (53100)', databaseError('53100')],
    ['too many connections (53300)', databaseError('53300')],
    ['a deadlock (40P01)', databaseError('40P01')],
    ['a lock timeout (55P03)', databaseError('55P03')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a programming error', new TypeError('x is not a function')],
    ['an error of this service, whose code also starts with E', { code: 'E-C1/1-01', message: 'This device is already registered' }],
  ])('%s: a later attempt may pass', (_label, error) => {
    expect(isStatementFailure(error)).toBe(false);
  });
});

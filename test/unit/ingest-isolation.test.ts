import { describe, expect, it } from 'vitest';
import { describeError, isTransientError } from '../../src/ingest/isolation.js';

/** An error as node-postgres reports a server error: a message and the SQLSTATE in `code`. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isTransientError', () => {
  it('says a failure is not the row’s when the database or the connection is at fault', () => {
    for (const error of [
      pgError('40P01', 'deadlock detected'),
      pgError('40001', 'could not serialize access due to concurrent update'),
      pgError('08006', 'connection failure'),
      pgError('53300', 'too many connections for role'),
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('55P03', 'canceling statement due to lock timeout'),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(isTransientError(error)).toBe(true);
    }
  });

  it('blames the row for data errors, constraint violations, a statement timeout and bugs', () => {
    for (const error of [
      pgError('22008', 'date/time field value out of range: "0000-01-01T00:00:00.000Z"'),
      pgError('22P05', 'unsupported Unicode escape sequence'),
      pgError('23514', 'new row for relation "readings_default" violates check constraint'),
      pgError('54000', 'index row size exceeds maximum'),
      pgError('57014', 'canceling statement due to statement timeout'),
      new TypeError("Cannot read properties of undefined (reading 'lat')"),
      'a thrown string',
      null,
    ]) {
      expect(isTransientError(error)).toBe(false);
    }
  });
});

describe('describeError', () => {
  it('gives the SQLSTATE and the message, storable and bounded', () => {
    expect(describeError(pgError('22008', 'date/time field value out of range'))).toBe(
      '22008 date/time field value out of range',
    );
    expect(describeError(new TypeError('bad \u0000 value'))).toBe('bad  value');
    expect(describeError('plain')).toBe('plain');
    expect(describeError(new Error('x'.repeat(5000)))).toHaveLength(1000);
  });
});

// parseRackQuery (src/http/rack-params.ts) runs in Fastify's router, outside any error handler: a throw
// stopped the process. Any query of brackets, line breaks, escapes and separators is parsed without one, into
// null-prototype hashes and lists only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isHash, parseRackQuery } from '../../src/http/rack-params.ts';

const onlyPlainValues = (value: unknown): boolean =>
  typeof value === 'string' ||
  value === null ||
  (Array.isArray(value) && value.every(onlyPlainValues)) ||
  (isHash(value) && Object.getPrototypeOf(value) === null && Object.values(value).every(onlyPlainValues));

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('parseRackQuery', { skip }, () => {
  it('parses any query of brackets, line breaks and escapes without throwing', () => {
    const unit = fc.constantFrom(
      '[',
      ']',
      '[]',
      'a',
      'b',
      '=',
      '&',
      '%0A',
      '%0D',
      '%E2%80%A8',
      '\n',
      '%',
      '+',
      '__proto__',
    );
    const query = fc.array(unit, { maxLength: 16 }).map((units) => units.join(''));
    fc.assert(
      fc.property(query, (q) => {
        const params = parseRackQuery(q);
        assert.ok(onlyPlainValues(params), q);
      }),
      { numRuns: 20_000 },
    );
  });
});

// parseRackQuery (src/http/rack-params.ts) runs in Fastify's router, outside any error handler: a throw
// stopped the process. Any query of brackets, line breaks, escapes and separators is parsed without one, into
// null-prototype hashes and lists only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decode, isHash, parseRackFormBytes, parseRackQuery } from '../../src/http/rack-params.ts';

const onlyPlainValues = (value: unknown): boolean =>
  typeof value === 'string' ||
  value === null ||
  (Array.isArray(value) && value.every(onlyPlainValues)) ||
  (isHash(value) && Object.getPrototypeOf(value) === null && Object.values(value).every(onlyPlainValues));

/** How decode() read a name or value before it read bytes: `+` a space, then decodeURIComponent, or not at all. */
function decodedAsBefore(text: string): string {
  const plus = text.replaceAll('+', ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

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

  it("parses a form's bytes as its text: escapes, pluses, bad escapes and bytes that are no UTF-8 alike", () => {
    // The body parse thread reads a large form from its bytes (parseRackFormBytes); its answer must be the one
    // parseRackQuery gives for the body's text, which decodes each name and value whole with decodeURIComponent
    // and keeps it undecoded but for its pluses when that refuses it.
    const unit = fc.oneof(
      fc
        .constantFrom('a', '=', '&', '[]', '+', '%', '%4', '%41', '%2B', '%26', '%E2', '%9C%93', '%E2%9C%93', '%C3%A9')
        .map((text) => Buffer.from(text)),
      fc
        .constantFrom('%C0%80', '%ED%A0%80', '%F4%90%80%80', '%F0%9F%98%80', '%zz', '%ff', '\u00e9', '\u2713')
        .map((text) => Buffer.from(text)),
      fc.constantFrom([0xe2], [0xff], [0x9c, 0x93], [0xe2, 0x9c]).map((bytes) => Buffer.from(bytes)),
    );
    const body = fc.array(unit, { maxLength: 16 }).map((units) => Buffer.concat(units));
    fc.assert(
      fc.property(body, fc.integer({ min: 0, max: 8 }), (bytes, longBytes) => {
        const expected = parseRackQuery(bytes.toString('utf8'));
        const parsed = parseRackFormBytes(bytes, longBytes, (long) => long.toString('utf8'));
        assert.deepEqual(parsed, expected, bytes.toString('hex'));
        // Both decode through bytes: each name and value as decodeURIComponent reads it.
        const text = bytes.toString('utf8');
        assert.equal(decode(text), decodedAsBefore(text), bytes.toString('hex'));
      }),
      { numRuns: 20_000 },
    );
  });
});

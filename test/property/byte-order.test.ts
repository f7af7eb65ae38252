// byteOrder (src/order.ts) orders any two texts as Buffer.compare orders their UTF-8 bytes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { byteOrder } from '../../src/order.ts';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('byteOrder', { skip }, () => {
  it('agrees with the order of the UTF-8 bytes, astral characters and U+E000-U+FFFF included', () => {
    // Letters from the ends of the planes UTF-16 orders unlike UTF-8, and plain ASCII.
    const unit = fc.constantFrom('a', 'b', 'é', '\u{d7ff}', '\u{e000}', '\u{ffff}', '\u{10000}', '\u{1f600}', '/', '');
    const text = fc.array(unit, { maxLength: 6 }).map((units) => units.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        assert.equal(
          Math.sign(byteOrder(a, b)),
          Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
          `${a} ${b}`,
        );
      }),
      { numRuns: 5000 },
    );
  });
});

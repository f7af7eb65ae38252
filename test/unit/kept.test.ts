// The caches of rendered HTML (views, descriptions, revisions pages and diffs) hold, each within its own limit,
// all of them within one: each alone was bounded, together they could keep over 600 MB (helper-61).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Kept } from '../../src/domain/rendering.ts';

const MiB = 1024 * 1024;

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('kept renderings', { skip }, () => {
  it('keeps all caches within one limit: the cache holding most gives up its oldest first', () => {
    const views = new Kept<string>((html) => 2 * html.length, { entries: 10, bytes: 128 * MiB });
    const pages = new Kept<string>((html) => 2 * html.length, { entries: 10, bytes: 128 * MiB });
    const small = 'x'.repeat(1024);
    views.keep('small', small);
    views.keep('large', 'x'.repeat(50 * MiB)); // 100 MB
    pages.keep('page', 'y'.repeat(40 * MiB)); // 80 MB: together past 160
    assert.equal(views.get('small'), undefined, "the largest cache's oldest went first");
    assert.equal(views.get('large'), undefined, 'and its next, until all fit');
    assert.equal(pages.get('page')?.length, 40 * MiB);
  });
});

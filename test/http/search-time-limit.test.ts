// On PostgreSQL a search's statements run on connections of their own, at most two a process, and stop at the
// search time limit (SNIPPETD_SEARCH_TIMEOUT_MS): a long text over long files made one search run for
// seconds in the database, and ten at once took every connection other requests needed. The search is then
// answered as GitLab's API::Search answers a cancelled query, and the page says so.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, TEST_DB, type TestApp } from '../helper.ts';

const skip = TEST_DB !== 'postgres' && 'the time limit is PostgreSQL’s (SQLite searches on reader threads)';
const WORD = `${'a'.repeat(99)} `;
/** Found nowhere, and slow to look for: PostgreSQL's LIKE compares it again at every `a` of the files. */
const SLOW_TEXT = `${WORD.repeat(40)}b`;

describe('a search over its time limit', { skip }, () => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp({ searchTimeoutMs: 200 });
    const text = WORD.repeat(10_000); // 1 MB
    await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      {
        title: 'long',
        visibility: 'public',
        description: text,
        files: Array.from({ length: 8 }, (_, i) => ({ file_path: `f${i}.txt`, content: text })),
      },
      201,
    );
  });
  after(() => t.close());

  it('is answered 408 {"error":"Request timed out"} by the API (title searches share its connections and limit)', async () => {
    const res = await t.api('GET', `/search?scope=snippet_blobs&search=${encodeURIComponent(SLOW_TEXT)}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 408, res.body.slice(0, 200));
    assert.deepEqual(res.json, { error: 'Request timed out' });
    // A search that finds what it looks for in time is answered as ever.
    const found = await t.api('GET', '/search?scope=snippet_titles&search=long', ROOT_TOKEN);
    assert.equal(found.statusCode, 200);
    assert.deepEqual(
      found.json.map((s: { title: string }) => s.title),
      ['long'],
    );
  });

  it('is a page saying so on the search page', async () => {
    const res = await t.request({ method: 'GET', url: `/search?search=${encodeURIComponent(SLOW_TEXT)}`, token: null });
    assert.equal(res.statusCode, 408);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(
      res.body,
      /<h1>Request timed out<\/h1><p>The search took too long\. Try a shorter text, or narrow it with a filter\.<\/p>/,
    );
  });
});

// Content search (snippet_blobs and the search page, snippetd's own) counts its total up to 100 snippets,
// GitLab's snippet_titles up to GitLab's 10,000 (docs/gitlab-compatibility.md, "Beyond GitLab" under search): X-Total and X-Total-Pages
// are exact up to the limit and left out beyond. Rows are inserted directly; the search index follows them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestApp, ROOT_TOKEN, snippetRow, TEST_DB, type TestApp, untilSearchIndexed } from '../helper.ts';
import type { SnippetListFilter, SnippetScope } from '../../src/storage/db/tables/snippets.ts';

const COUNTED = 100;

describe('search totals around 100 matches', () => {
  let t: TestApp;
  let newestId: number;

  before(async () => {
    t = await createTestApp();
    const author = await t.user('searched');
    const now = new Date().toISOString();
    await t.app.store.kysely.transaction().execute(async (tx) => {
      const rows = Array.from({ length: COUNTED + 1 }, (_, i) => snippetRow(author.id, now, { title: `needle ${i}` }));
      for (let i = 0; i < rows.length; i += 500)
        await tx
          .insertInto('snippets')
          .values(rows.slice(i, i + 500))
          .execute();
    });
    newestId = (
      await t.app.store.kysely
        .selectFrom('snippets')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow()
    ).id as number;
  });
  after(() => t.close());

  const search = async (scope: string, query = '') => {
    const res = await t.api('GET', `/search?scope=${scope}&search=needle${query}`, ROOT_TOKEN);
    assert.equal(res.statusCode, 200, res.body);
    return {
      count: (res.json as unknown[]).length,
      total: res.headers['x-total'],
      totalPages: res.headers['x-total-pages'],
      next: res.headers['x-next-page'],
    };
  };

  it('101 matches: content search leaves its totals out, snippet_titles counts them, the page says more than 100', async () => {
    assert.deepEqual(await search('snippet_blobs'), { count: 20, total: undefined, totalPages: undefined, next: '2' });
    assert.deepEqual(await search('snippet_blobs', '&per_page=20&page=6'), {
      count: 1,
      total: undefined,
      totalPages: undefined,
      next: '',
    });
    assert.deepEqual(await search('snippet_titles'), { count: 20, total: '101', totalPages: '6', next: '2' });
    const page = await t.request({ method: 'GET', url: '/search?search=needle', token: null });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /More than 100 snippets/);
  });

  it('100 matches: exact totals from both scopes, and on the page', async () => {
    await t.app.store.snippets.delete(newestId);
    assert.deepEqual(await search('snippet_blobs'), { count: 20, total: '100', totalPages: '5', next: '2' });
    assert.deepEqual(await search('snippet_blobs', '&per_page=50&page=2'), {
      count: 50,
      total: '100',
      totalPages: '2',
      next: '',
    });
    assert.deepEqual(await search('snippet_titles'), { count: 20, total: '100', totalPages: '5', next: '2' });
    const page = await t.request({ method: 'GET', url: '/search?search=needle', token: null });
    assert.match(page.body, /[^,\d]100 snippets/);
    assert.doesNotMatch(page.body, /More than/);
  });
});

// A text in more than 1,000 files and snippets is first looked for among the latest 250, then 2,000, snippets
// the viewer may see (WALKED_FIRST, storage/db/tables/snippet-text.ts), and as before when they hold too few.
// The answers through HTTP are the same either way; which way found them is asked of the store itself.
describe('content search of a text in a large share of the snippets', () => {
  const WALKED = 2_000;
  const OLDER = 1_100;
  const ADMIN: SnippetScope = { everything: true };
  let t: TestApp;
  let other: { id: number; token: string };
  /** The order of search results: the latest updated first, then the highest id (ties are made on purpose). */
  let order: { id: number; title: string; updated_at: string; visibility: string }[];
  const holding = (text: string, visible = (_: (typeof order)[number]) => true) =>
    order.filter((s) => s.title.toLowerCase().includes(text.toLowerCase()) && visible(s)).map((s) => s.id);
  const notPrivate = (s: (typeof order)[number]) => s.visibility !== 'private';

  before(async () => {
    t = await createTestApp();
    const author = await t.user('many');
    other = await t.user('other');
    // Update times in an order of their own, two snippets to each: 1,100 holders of `older` updated before the
    // latest 2,050, of which two in three hold `haystack`, every fifth is private and holds `secret`, one in 25
    // is internal, and the titles alternate between `ÉCOLE` and `école`.
    const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + Math.floor(n / 2) * 1000).toISOString();
    const rows = Array.from({ length: OLDER + WALKED + 50 }, (_, i) => {
      if (i < OLDER) return snippetRow(author.id, at((i * 7) % OLDER), { title: `older ${i}` });
      const n = i - OLDER;
      const words = [`row ${i}`, n % 3 ? 'haystack' : '', n % 5 === 0 ? 'secret' : '', n % 2 ? 'ÉCOLE' : 'école'];
      const updated = at(OLDER + ((n * 13) % (WALKED + 50)));
      return snippetRow(author.id, updated, {
        title: words.filter((w) => w).join(' '),
        visibility: n % 5 === 0 ? 'private' : n % 25 === 1 ? 'internal' : 'public',
      });
    });
    await t.app.store.kysely.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += 500)
        await tx
          .insertInto('snippets')
          .values(rows.slice(i, i + 500))
          .execute();
    });
    // The search index and statistics as a running server keeps them: how many snippets hold a text is
    // counted through SQLite's index, estimated from PostgreSQL's statistics.
    if (TEST_DB === 'postgres') await sql`ANALYZE snippets`.execute(t.app.store.kysely);
    else await untilSearchIndexed(t.app.store.kysely);
    order = await t.app.store.kysely
      .selectFrom('snippets')
      .select(['id', 'title', 'updated_at', 'visibility'])
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  });
  after(() => t.close());

  const ids = async (text: string, page: number, perPage: number, token = ROOT_TOKEN) => {
    const res = await t.api(
      'GET',
      `/search?scope=snippet_blobs&search=${encodeURIComponent(text)}&page=${page}&per_page=${perPage}`,
      token,
    );
    assert.equal(res.statusCode, 200, res.body);
    return { ids: (res.json as { id: number }[]).map((s) => s.id), total: res.headers['x-total'] };
  };
  const walked = (text: string, scope: SnippetScope, filter: SnippetListFilter = {}) =>
    t.app.store.snippets.walkedFirst(scope, filter, text, COUNTED + 1);

  it('finds a text most of the latest snippets hold in their order, on the first pages and past the count', async () => {
    const haystack = holding('haystack');
    assert.deepEqual(await walked('haystack', ADMIN), haystack.slice(0, COUNTED + 1));
    assert.deepEqual(await ids('haystack', 1, 20), { ids: haystack.slice(0, 20), total: undefined });
    assert.deepEqual(await ids('haystack', 6, 20), { ids: haystack.slice(100, 120), total: undefined });
    assert.deepEqual(await ids('haystack', 3, 100), { ids: haystack.slice(200, 300), total: undefined });
  });

  it('finds the holders the latest snippets do not hold, past the snippets walked first', async () => {
    const older = holding('older');
    assert.equal(older.length, OLDER);
    assert.equal(await walked('older', ADMIN), null);
    assert.deepEqual(await ids('older', 1, 100), { ids: older.slice(0, 100), total: undefined });
    assert.deepEqual(await ids('older', 11, 100), { ids: older.slice(1000, 1100), total: undefined });
    assert.deepEqual(await ids('older', 12, 100), { ids: [], total: undefined });
  });

  it('finds what the viewer may see only, and all of it when they see fewer than it walks', async () => {
    const viewer: SnippetScope = { everything: false, userId: other.id, levels: ['public', 'internal'] };
    const seen = holding('haystack', notPrivate);
    assert.deepEqual(await walked('haystack', viewer), seen.slice(0, COUNTED + 1));
    assert.deepEqual(await ids('haystack', 2, 100, other.token), {
      ids: seen.slice(100, 200),
      total: undefined,
    });
    assert.deepEqual(await ids('secret', 1, 100, other.token), { ids: [], total: '0' });
    // The latest 250 the viewer may see hold none of it: walked no further.
    assert.equal(await walked('secret', viewer), null);
    // A viewer of fewer snippets than a walk takes (here, of the internal ones alone): all of them walked,
    // every holder found, the answer complete.
    const internal = holding('haystack', (s) => s.visibility === 'internal');
    assert.ok(internal.length > 20 && internal.length < 100, String(internal.length));
    const ofInternal: SnippetScope = { everything: false, userId: other.id, levels: ['internal'] };
    assert.deepEqual(await walked('haystack', ofInternal), internal);
  });

  it('finds a text beyond ASCII in any case; SQLite finds it through its index, not by walking', async () => {
    const ecole = holding('école');
    assert.equal(ecole.length, WALKED + 50);
    for (const text of ['école', 'ÉCOLE', 'École']) {
      assert.deepEqual(await ids(text, 1, 100), { ids: ecole.slice(0, 100), total: undefined }, text);
      assert.deepEqual(await ids(text, 10, 100), { ids: ecole.slice(900, 1000), total: undefined }, text);
    }
    if (TEST_DB === 'sqlite') assert.equal(await walked('école', ADMIN), null);
    else assert.deepEqual(await walked('ÉCOLE', ADMIN), ecole.slice(0, COUNTED + 1));
  });

  it('does not walk first under a filter that may scatter what it walks', async () => {
    const filters: SnippetListFilter[] = [
      { authorId: 1 },
      { projectId: 1 },
      { groupTraversalIds: '1' },
      { filePathContains: 'x' },
      { fileExtensions: ['rb'] },
      { visibility: 'public' },
    ];
    for (const filter of filters) assert.equal(await walked('haystack', ADMIN, filter), null, JSON.stringify(filter));
  });
});

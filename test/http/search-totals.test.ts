// Content search (snippet_blobs and the search page, snippetd's own) counts its total up to 100 snippets,
// GitLab's snippet_titles up to GitLab's 10,000 (docs/gitlab-compatibility.md, "Beyond GitLab" under search): X-Total and X-Total-Pages
// are exact up to the limit and left out beyond. Rows are inserted directly; the search index follows them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestApp, ROOT_TOKEN, snippetRow, TEST_DB, type TestApp, untilSearchIndexed } from '../helper.ts';

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
describe('content search of a text in a large share of the snippets', () => {
  const WALKED = 2_000;
  const OLDER = 1_100;
  let t: TestApp;
  let other: { token: string };
  /** Ids of the snippets holding each text, the latest updated first. */
  const holders = { older: [] as number[], haystack: [] as number[], secret: [] as number[] };

  before(async () => {
    t = await createTestApp();
    const author = await t.user('many');
    other = await t.user('other');
    const now = new Date().toISOString();
    // 1,100 holders of `older`, then the latest 2,050 (all updated at once: the newest first), two in three
    // holding `haystack`, every fifth a private one holding `secret` too.
    const rows = Array.from({ length: OLDER + WALKED + 50 }, (_, i) => {
      if (i < OLDER) return snippetRow(author.id, now, { title: `older ${i}` });
      const title = `row ${i}${i % 3 ? ' haystack' : ''}${i % 5 === 0 ? ' secret' : ''}`;
      return snippetRow(author.id, now, { title, visibility: i % 5 === 0 ? 'private' : 'public' });
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
    const all = await t.app.store.kysely.selectFrom('snippets').select(['id', 'title']).orderBy('id', 'desc').execute();
    for (const { id, title } of all)
      for (const text of Object.keys(holders) as (keyof typeof holders)[])
        if (title.includes(text)) holders[text].push(id);
  });
  after(() => t.close());

  const ids = async (text: string, page: number, perPage: number, token = ROOT_TOKEN) => {
    const res = await t.api(
      'GET',
      `/search?scope=snippet_blobs&search=${text}&page=${page}&per_page=${perPage}`,
      token,
    );
    assert.equal(res.statusCode, 200, res.body);
    return { ids: (res.json as { id: number }[]).map((s) => s.id), total: res.headers['x-total'] };
  };

  it('finds the holders the latest snippets do not hold, past the snippets walked first', async () => {
    assert.equal(holders.older.length, OLDER);
    assert.deepEqual(await ids('older', 1, 100), { ids: holders.older.slice(0, 100), total: undefined });
    assert.deepEqual(await ids('older', 11, 100), { ids: holders.older.slice(1000, 1100), total: undefined });
    assert.deepEqual(await ids('older', 12, 100), { ids: [], total: undefined });
  });

  it('finds a text most of the latest snippets hold in order, on the first pages and past the count', async () => {
    assert.deepEqual(await ids('haystack', 1, 20), { ids: holders.haystack.slice(0, 20), total: undefined });
    assert.deepEqual(await ids('haystack', 6, 20), { ids: holders.haystack.slice(100, 120), total: undefined });
    assert.deepEqual(await ids('haystack', 3, 100), { ids: holders.haystack.slice(200, 300), total: undefined });
  });

  it('finds what the viewer may see only: a text in private snippets alone, past them for another viewer', async () => {
    assert.equal(holders.secret.length, 410);
    assert.deepEqual(await ids('secret', 1, 100), { ids: holders.secret.slice(0, 100), total: undefined });
    assert.deepEqual(await ids('secret', 1, 100, other.token), { ids: [], total: '0' });
    const publicHaystack = holders.haystack.filter((id) => !holders.secret.includes(id));
    assert.deepEqual(await ids('haystack', 2, 100, other.token), {
      ids: publicHaystack.slice(100, 200),
      total: undefined,
    });
  });
});

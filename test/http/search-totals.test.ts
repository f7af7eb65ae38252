// Content search (snippet_blobs and the search page, snippetd's own) counts its total up to 1,000 snippets,
// GitLab's snippet_titles up to GitLab's 10,000 (docs/gitlab-compatibility.md, "Beyond GitLab" under search): X-Total and X-Total-Pages
// are exact up to the limit and left out beyond. Rows are inserted directly; the search index follows them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, snippetRow, type TestApp } from '../helper.ts';

const COUNTED = 1_000;

describe('search totals around 1,000 matches', () => {
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

  it('1,001 matches: content search leaves its totals out, snippet_titles counts them, the page says more than 1,000', async () => {
    assert.deepEqual(await search('snippet_blobs'), { count: 20, total: undefined, totalPages: undefined, next: '2' });
    assert.deepEqual(await search('snippet_blobs', '&per_page=100&page=11'), {
      count: 1,
      total: undefined,
      totalPages: undefined,
      next: '',
    });
    assert.deepEqual(await search('snippet_titles'), { count: 20, total: '1001', totalPages: '51', next: '2' });
    const page = await t.request({ method: 'GET', url: '/search?search=needle', token: null });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /More than 1,000 snippets/);
  });

  it('1,000 matches: exact totals from both scopes, and on the page', async () => {
    await t.app.store.snippets.delete(newestId);
    assert.deepEqual(await search('snippet_blobs'), { count: 20, total: '1000', totalPages: '50', next: '2' });
    assert.deepEqual(await search('snippet_blobs', '&per_page=100&page=10'), {
      count: 100,
      total: '1000',
      totalPages: '10',
      next: '',
    });
    assert.deepEqual(await search('snippet_titles'), { count: 20, total: '1000', totalPages: '50', next: '2' });
    const page = await t.request({ method: 'GET', url: '/search?search=needle', token: null });
    assert.match(page.body, /1,000 snippets/);
  });
});

// The totals of a snippet list around GitLab's 10,000-row limit (docs/gitlab-compatibility.md#pagination):
// X-Total and X-Total-Pages are exact up to 10,000 snippets and left out beyond, on every page, whether the
// total is counted or follows from the page itself (storage/db/page.ts). Rows are inserted directly: a list
// reads rows and paths, never git.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, snippetRow, type TestApp } from '../helper.ts';

const MAX_COUNTED = 10_000;

describe('snippet list totals around 10,000 rows', () => {
  let t: TestApp;
  let author: { id: number; token: string };
  let newestId: number;

  const page = async (query: string) => {
    const res = await t.api('GET', `/snippets/public?${query}`, author.token);
    assert.equal(res.statusCode, 200, res.body);
    return {
      ids: (res.json as { id: number }[]).map((s) => s.id),
      total: res.headers['x-total'],
      totalPages: res.headers['x-total-pages'],
      next: res.headers['x-next-page'],
      prev: res.headers['x-prev-page'],
      last: /rel="last"/.test(String(res.headers.link)),
    };
  };
  const idsFrom = (from: number, count: number) => Array.from({ length: count }, (_, i) => from - i);

  before(async () => {
    t = await createTestApp();
    author = await t.user('prolific');
    const db = t.app.store.kysely;
    const now = new Date().toISOString();
    await db.transaction().execute(async (tx) => {
      for (let i = 0; i < MAX_COUNTED + 1; i += 500) {
        const rows = Array.from({ length: Math.min(500, MAX_COUNTED + 1 - i) }, (_, j) =>
          snippetRow(author.id, now, { title: `s${i + j}`, file_name: 'a.txt' }),
        );
        const ids = await tx.insertInto('snippets').values(rows).returning('id').execute();
        await tx
          .insertInto('snippet_files')
          .values(ids.map(({ id }) => ({ snippet_id: id, path: 'a.txt', blob_id: 'b'.repeat(40), size: 0 })))
          .execute();
      }
    });
    newestId = (
      await db
        .selectFrom('snippets')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow()
    ).id as number;
  });
  after(() => t.close());

  it('leaves the totals out on every page while there are 10,001, counted or not', async () => {
    // The first page (counted with its rows), a page ending at the 10,000th row (counted), one past it
    // whose full page shows more than 10,000, and the last, short page that ends the list at 10,001.
    assert.deepEqual(await page('per_page=20'), {
      ids: idsFrom(newestId, 20),
      total: undefined,
      totalPages: undefined,
      next: '2',
      prev: '',
      last: false,
    });
    assert.deepEqual(await page('per_page=100&page=99'), {
      ids: idsFrom(newestId - 9800, 100),
      total: undefined,
      totalPages: undefined,
      next: '100',
      prev: '98',
      last: false,
    });
    assert.deepEqual(await page('per_page=100&page=100'), {
      ids: idsFrom(newestId - 9900, 100),
      total: undefined,
      totalPages: undefined,
      next: '101',
      prev: '99',
      last: false,
    });
    assert.deepEqual(await page('per_page=100&page=101'), {
      ids: [newestId - 10_000],
      total: undefined,
      totalPages: undefined,
      next: '',
      prev: '100',
      last: false,
    });
    assert.deepEqual(await page('per_page=100&page=102'), {
      ids: [],
      total: undefined,
      totalPages: undefined,
      next: '',
      prev: '101',
      last: false,
    });
  });

  it('gives exact totals on every page once there are 10,000', async () => {
    await t.app.store.snippets.delete(newestId);
    try {
      const newest = newestId - 1;
      assert.deepEqual(await page('per_page=20'), {
        ids: idsFrom(newest, 20),
        total: '10000',
        totalPages: '500',
        next: '2',
        prev: '',
        last: true,
      });
      assert.deepEqual(await page('per_page=20&page=500'), {
        ids: idsFrom(newest - 9980, 20),
        total: '10000',
        totalPages: '500',
        next: '',
        prev: '499',
        last: true,
      });
      assert.deepEqual(await page('per_page=30&page=334'), {
        ids: idsFrom(newest - 9990, 10),
        total: '10000',
        totalPages: '334',
        next: '',
        prev: '333',
        last: true,
      });
      // Past the end: nothing on the page tells the total, so it is counted.
      assert.deepEqual(await page('per_page=20&page=501'), {
        ids: [],
        total: '10000',
        totalPages: '500',
        next: '',
        prev: '',
        last: true,
      });
      // The administrator's list counts the same rows through another filter.
      const all = await t.api('GET', '/snippets/all?per_page=1', ROOT_TOKEN);
      assert.equal(all.headers['x-total'], '10000');
    } finally {
      newestId -= 1;
    }
  });

  it('shows a deep page as it is after the write just before it', async () => {
    // A page past the first thousand rows is read on another connection on SQLite (storage/db/tables/
    // snippets.ts): it must see what the request before it committed.
    const before = await page('per_page=100&page=11');
    assert.deepEqual(before.ids, idsFrom(newestId - 1000, 100));
    const created = await t.ok(
      'POST',
      '/snippets',
      author.token,
      { title: 'newest', visibility: 'public', files: [{ file_path: 'n.txt', content: 'n' }] },
      201,
    );
    assert.ok(created.id > newestId);
    const after = await page('per_page=100&page=11');
    assert.deepEqual(after.ids, [newestId - 999, ...idsFrom(newestId - 1000, 99)]);
    await t.expect('DELETE', `/snippets/${created.id}`, author.token, undefined, 204);
    assert.deepEqual((await page('per_page=100&page=11')).ids, before.ids);
  });

  it('walks the pages past the counted rows one after another as offsets would, writes between them included', async () => {
    // Each such page starts below the id the page before it ended at (storage/db/page-boundaries.ts), as long as
    // nothing was written since: a create, a delete or a change of visibility between two pages must move the
    // next as its offset says. The oracle: the public personal snippets' ids, newest first, straight from SQL.
    const db = t.app.store.kysely;
    const now = new Date().toISOString();
    await db
      .insertInto('snippets')
      .values(Array.from({ length: 400 }, (_, i) => snippetRow(author.id, now, { title: `later ${i}` })))
      .execute();
    const oracle = async (n: number) => {
      const rows = await db
        .selectFrom('snippets')
        .select('id')
        .where('visibility', '=', 'public')
        .where('project_id', 'is', null)
        .orderBy('id', 'desc')
        .execute();
      const offset = (n - 1) * 100;
      const ids = rows.slice(offset, offset + 100).map((r) => r.id);
      const more = rows.length > offset + 100;
      return {
        ids,
        total: undefined,
        totalPages: undefined,
        next: more ? String(n + 1) : '',
        prev: String(n - 1),
        last: false,
      };
    };
    const same = async (n: number) =>
      assert.deepEqual(await page(`per_page=100&page=${n}`), await oracle(n), `page ${n}`);
    for (const n of [100, 101, 102]) await same(n);
    const created = await t.ok(
      'POST',
      '/snippets',
      author.token,
      { title: 'between pages', visibility: 'public', files: [{ file_path: 'n.txt', content: 'n' }] },
      201,
    );
    await same(103);
    await t.expect('DELETE', `/snippets/${created.id}`, author.token, undefined, 204);
    await same(104);
    await same(103);
    await same(104);
    const hidden = (await oracle(104)).ids[50];
    await t.ok('PUT', `/snippets/${hidden}`, author.token, { visibility: 'private' }, 200);
    await same(104);
    assert.equal((await oracle(104)).ids.includes(hidden), false);
  });
});

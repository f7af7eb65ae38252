// The repository reads that run git on the node's copy, past their time budget (SNIPPETD_RENDER_BUDGET_MS, here 1 ms,
// which no git process meets): GitLab's 408 {"message":"408 Request Timeout"}, never a 500 or a partial answer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, projectRefRow, projectWithSideBranch, type TestApp } from '../helper.ts';

const TIMEOUT = { message: '408 Request Timeout' };

describe('repository reads over their git time budget', () => {
  let t: TestApp;
  let token: string;
  let P: number;

  before(async () => {
    t = await createTestApp({ renderBudgetMs: 1 });
    token = (await t.user('alice')).token;
    P = await projectWithSideBranch(t, token);
  });
  after(() => t.close());

  it('answers 408 for a commit diff, a compare, a merge base, commits in topological order and branches by time', async () => {
    for (const url of [
      `/projects/${P}/repository/commits/side/diff`,
      `/projects/${P}/repository/compare?from=main&to=side`,
      `/projects/${P}/repository/merge_base?refs[]=main&refs[]=side`,
      `/projects/${P}/repository/commits?order=topo`,
      `/projects/${P}/repository/branches?sort=updated_desc`,
    ])
      await t.fails('GET', url, token, undefined, 408, TIMEOUT);
  });

  it('answers 408 for tags by date when reading their commits takes longer than the budget', async () => {
    // Every tag's commit is read for its time (GitLab's default order): 2,000 tags, as rows a push leaves.
    const main = await projectRefRow(t, P);
    const rows = Array.from({ length: 2000 }, (_, i) => ({ ...main, name: `refs/tags/v${i}` }));
    await t.app.store.kysely.insertInto('git_refs').values(rows).execute();
    await t.fails('GET', `/projects/${P}/repository/tags`, token, undefined, 408, TIMEOUT);
    // By name, only a page's commits are read.
    const byName = await t.ok('GET', `/projects/${P}/repository/tags?order_by=name&per_page=2`, token, undefined, 200);
    assert.deepEqual(
      byName.map((tag: { name: string }) => tag.name),
      ['v999', 'v998'],
    );
  });
});

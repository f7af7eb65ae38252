// GET /projects/:id/repository/branches and …/branches/:branch, HEAD too (docs/gitlab-compatibility.md#repository-files):
// GitLab's Branch entity, in git's order; `merged` as git tells it on the node's copy of the repository (the oracle:
// `git merge-base --is-ancestor`), `search` as GitLab's BranchesFinder.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const e = encodeURIComponent;

describe('project branches API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, reporter: U, stranger: U;
  let P: number;

  const gitDir = async () => (await t.gitDir('project', P))!;
  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', await gitDir(), ...args], { encoding: 'utf8' }).trim();
  const write = (branch: string, path: string, extra: Record<string, string> = {}) =>
    t.ok(
      'POST',
      `/projects/${P}/repository/files/${e(path)}`,
      alice.token,
      { branch, content: `${path}\n`, commit_message: `Add ${path}`, ...extra },
      201,
    );
  const get = (url: string, token: string | null = alice.token, method = 'GET') =>
    t.request({ method, url: `/api/v4/projects/${P}/repository/branches${url}`, token });

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    reporter = await t.user('reporter');
    stranger = await t.user('stranger');
    P = (await t.ok('POST', '/projects', alice.token, { path: 'code', visibility: 'private' }, 201)).id;
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: reporter.id, access_level: 20 }, 201);
    await write('main', 'a.txt');
    const first = await git('rev-parse', 'main');
    await write('main', 'b.txt');
    await write('feature/x', 'c.txt', { start_branch: 'main' });
    await write('Zeta', 'z.txt', { start_branch: 'main' });
    await write('a+b', 'p.txt', { start_branch: 'main' });
    // Branches git made: one behind main (merged), one at main's head (not merged, as GitLab says of it).
    await git('update-ref', 'refs/heads/behind', first);
    await git('update-ref', 'refs/heads/same', 'main');
    await t.importGitDir('project', P);
  });
  after(() => t.close());

  it("lists the branches in git's order as GitLab's Branch entity; merged as git tells it", async () => {
    const res = await get('?per_page=100');
    assert.equal(res.statusCode, 200, res.body);
    const names = res.json.map((b: { name: string }) => b.name);
    assert.deepEqual(names, (await git('for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/')).split('\n'));
    assert.deepEqual(names, ['Zeta', 'a+b', 'behind', 'feature/x', 'main', 'same']);
    const mainHead = await git('rev-parse', 'main');
    for (const b of res.json) {
      const head = await git('rev-parse', `refs/heads/${b.name}`);
      const ancestor =
        spawnSync('git', ['--git-dir', await gitDir(), 'merge-base', '--is-ancestor', head, mainHead]).status === 0;
      assert.equal(b.merged, ancestor && head !== mainHead, b.name);
      assert.equal(b.commit.id, head, b.name);
      assert.deepEqual(
        [b.protected, b.developers_can_push, b.developers_can_merge, b.can_push, b.default],
        [false, false, false, true, b.name === 'main'],
        b.name,
      );
    }
    assert.deepEqual(
      res.json.filter((b: { merged: boolean }) => b.merged).map((b: { name: string }) => b.name),
      ['behind'],
    );
    const feature = res.json.find((b: { name: string }) => b.name === 'feature/x');
    assert.equal(feature.web_url, `${BASE}/alice/code/-/tree/feature/x`);
    // As Rails' route helpers escape a path: a + stays.
    assert.equal(res.json.find((b: { name: string }) => b.name === 'a+b').web_url, `${BASE}/alice/code/-/tree/a+b`);
    const listed = (
      await t.ok('GET', `/projects/${P}/repository/commits?ref_name=feature/x&per_page=1`, alice.token, undefined, 200)
    )[0];
    assert.deepEqual(feature.commit, listed);
  });

  it('searches as GitLab: anywhere in any case, ^ at the start, $ at the end; pages with their headers', async () => {
    const names = async (query: string) => (await get(query)).json.map((b: { name: string }) => b.name);
    assert.deepEqual(await names('?search=E'), ['Zeta', 'behind', 'feature/x', 'same']);
    assert.deepEqual(await names('?search=%5Ebe'), ['behind']);
    assert.deepEqual(await names('?search=x%24'), ['feature/x']);
    const page = await get('?per_page=2&page=2');
    assert.deepEqual(
      page.json.map((b: { name: string }) => b.name),
      ['behind', 'feature/x'],
    );
    assert.equal(page.headers['x-total'], '6');
    assert.equal(page.headers['x-total-pages'], '3');
  });

  it('GET and HEAD one branch by its name (a / as %2F); 404 Branch Not Found, 400 for a name git refuses', async () => {
    const one = await get(`/${e('feature/x')}`);
    assert.equal(one.statusCode, 200, one.body);
    const all = await get('?per_page=100');
    assert.deepEqual(
      one.json,
      all.json.find((b: { name: string }) => b.name === 'feature/x'),
    );
    assert.equal((await get(`/${e('feature/x')}`, alice.token, 'HEAD')).statusCode, 204);
    for (const name of ['nope', 'feature', 'a..b', 'a'.repeat(3000)]) {
      const res = await get(`/${e(name)}`);
      // A name git refuses is 400 (GitLab's find_branch!, its spec's 'branch*'); HEAD only asks whether it exists.
      const answer =
        name === 'a..b'
          ? [400, { message: 'The branch refname is invalid' }]
          : [404, { message: '404 Branch Not Found' }];
      assert.deepEqual([res.statusCode, res.json], answer, name.slice(0, 10));
      assert.equal((await get(`/${e(name)}`, alice.token, 'HEAD')).statusCode, 404, name.slice(0, 10));
    }
  });

  it("can_push is the caller's; the code is hidden from those who may not read it", async () => {
    const res = await get('/main', reporter.token);
    assert.equal(res.json.can_push, false);
    for (const token of [stranger.token, null]) {
      const hidden = await get('', token);
      assert.deepEqual([hidden.statusCode, hidden.json], [404, { message: '404 Project Not Found' }]);
    }
    const sorted = await get('?sort=updated');
    assert.deepEqual([sorted.statusCode, sorted.json], [400, { error: 'sort does not have a valid value' }]);
  });

  it("sorts by the branches' commit times as git for-each-ref --sort=committerdate does, ties by name", async () => {
    // Commits of known times, made by git and imported: two share a time, so that their names decide.
    const dir = await gitDir();
    const at = (date: string) => ({
      ...process.env,
      GIT_AUTHOR_NAME: 'd',
      GIT_AUTHOR_EMAIL: 'd@e',
      GIT_COMMITTER_NAME: 'd',
      GIT_COMMITTER_EMAIL: 'd@e',
      GIT_COMMITTER_DATE: date,
      GIT_AUTHOR_DATE: date,
    });
    const tree = await git('rev-parse', 'main^{tree}');
    const main = await git('rev-parse', 'main');
    for (const [name, date] of [
      ['dated/b-2020', '2020-01-01T00:00:00Z'],
      ['dated/a-2022', '2022-01-01T00:00:00Z'],
      ['dated/d-2021', '2021-06-01T00:00:00Z'],
      ['dated/c-2021', '2021-06-01T00:00:00Z'],
    ]) {
      const commit = execFileSync('git', ['--git-dir', dir, 'commit-tree', tree, '-p', main, '-m', name], {
        env: at(date),
        encoding: 'utf8',
      }).trim();
      await git('update-ref', `refs/heads/${name}`, commit);
    }
    await t.importGitDir('project', P);
    const names = (res: { json: { name: string }[] }) => res.json.map((b) => b.name);
    for (const [sort, gitSort] of [
      ['updated_desc', '-committerdate'],
      ['updated_asc', 'committerdate'],
    ]) {
      const expected = (
        await git('for-each-ref', `--sort=${gitSort}`, '--format=%(refname:lstrip=2)', 'refs/heads/')
      ).split('\n');
      const all = await get(`?sort=${sort}&per_page=100`);
      assert.equal(all.statusCode, 200, all.body);
      assert.deepEqual(names(all), expected, sort);
      assert.equal(all.headers['x-total'], String(expected.length));
      const second = await get(`?sort=${sort}&per_page=2&page=2`);
      assert.deepEqual(names(second), expected.slice(2, 4), sort);
      // Each entry as the single branch's answer.
      assert.deepEqual(all.json[0], (await get(`/${e(all.json[0].name)}`)).json);
      const searched = await get(`?sort=${sort}&search=DATED%2F`);
      assert.deepEqual(
        names(searched),
        expected.filter((n) => n.startsWith('dated/')),
        sort,
      );
    }
    for (const name of ['a-2022', 'b-2020', 'c-2021', 'd-2021'])
      await t.expect('DELETE', `/projects/${P}/repository/branches/${e(`dated/${name}`)}`, alice.token, undefined, 204);
  });
});

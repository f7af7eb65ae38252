// POST /projects/:id/repository/branches and DELETE …/branches/:branch (GitLab's lib/api/branches.rb,
// Branches::CreateService and DeleteService; the messages are those of GitLab's spec/requests/api/branches_spec.rb).
// git, reading the node's copy of the repository, is the oracle of where each branch is.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const e = encodeURIComponent;

describe('creating and deleting branches', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, developer: U, reporter: U, stranger: U;
  let P: number;

  const git = async (project: number, ...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', project))!, ...args], { encoding: 'utf8' }).trim();
  const write = (project: number, branch: string, path: string, extra: Record<string, string> = {}) =>
    t.ok(
      'POST',
      `/projects/${project}/repository/files/${e(path)}`,
      alice.token,
      { branch, content: `${path}\n`, commit_message: `Add ${path}`, ...extra },
      201,
    );
  const create = (body: Record<string, string>, token: string | null = developer.token, project = P) =>
    t.api('POST', `/projects/${project}/repository/branches`, token, body);
  const remove = (branch: string, token: string | null = developer.token, headers?: Record<string, string>) =>
    t.api('DELETE', `/projects/${P}/repository/branches/${e(branch)}`, token, undefined, headers);
  const refs = async (project = P) =>
    (await git(project, 'for-each-ref', '--format=%(refname:lstrip=2) %(objectname)', 'refs/heads/')).split('\n');

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    [alice, developer, reporter, stranger] = [
      await t.user('alice'),
      await t.user('dev'),
      await t.user('reporter'),
      await t.user('stranger'),
    ];
    P = (await t.ok('POST', '/projects', alice.token, { path: 'code', visibility: 'private' }, 201)).id;
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: developer.id, access_level: 30 }, 201);
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: reporter.id, access_level: 20 }, 201);
    await write(P, 'main', 'a.txt');
    await write(P, 'main', 'b.txt');
  });
  after(() => t.close());

  it('makes a branch at a branch, a commit id or an abbreviated one: 201 with the Branch entity GET gives', async () => {
    const head = await git(P, 'rev-parse', 'main');
    const first = await git(P, 'rev-parse', 'main~1');
    for (const [name, ref, at] of [
      ['from-branch', 'main', head],
      ['from/commit', first, first],
      ['from-short', first.slice(0, 8), first],
    ]) {
      const res = await create({ branch: name, ref });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(await git(P, 'rev-parse', `refs/heads/${name}`), at, name);
      const shown = await t.ok('GET', `/projects/${P}/repository/branches/${e(name)}`, developer.token, undefined, 200);
      assert.deepEqual(res.json, shown);
      assert.equal(res.json.name, name);
      assert.equal(res.json.commit.id, at);
      assert.equal(res.json.web_url, `${BASE}/alice/code/-/tree/${name}`);
      assert.deepEqual([res.json.default, res.json.can_push, res.json.protected], [false, true, false]);
    }
  });

  it("refuses as GitLab does: an invalid name, one taken, a ref naming nothing, a name under another's", async () => {
    const before = await refs();
    for (const [body, message] of [
      [{ branch: 'new design', ref: 'main' }, 'Branch name is invalid'],
      // GitLab's GitRefValidator: names git takes that would read as another ref.
      [{ branch: 'HEAD', ref: 'main' }, 'Branch name is invalid'],
      [{ branch: 'refs/heads/main', ref: 'main' }, 'Branch name is invalid'],
      [{ branch: 'refs/remotes/origin/x', ref: 'main' }, 'Branch name is invalid'],
      [{ branch: 'main', ref: 'main' }, 'Branch already exists'],
      [{ branch: 'new_design3', ref: 'foo' }, "Failed to create branch 'new_design3': invalid reference name 'foo'"],
      [
        { branch: 'main/sub', ref: 'main' },
        "Failed to create branch 'main/sub': Branch name conflicts with existing branch hierarchy.",
      ],
    ] as const) {
      const res = await create(body);
      assert.deepEqual([res.statusCode, res.json], [400, { message }], JSON.stringify(body));
    }
    const missing = await create({ ref: 'main' });
    assert.deepEqual([missing.statusCode, missing.json], [400, { error: 'branch is missing' }]);
    const blank = await create({ branch: 'x', ref: '' });
    assert.deepEqual([blank.statusCode, blank.json], [400, { error: 'ref is empty' }]);
    assert.deepEqual(await refs(), before);
  });

  it('is for developers: a reporter gets 403, someone who cannot see the project 404, as does a visitor', async () => {
    const before = await refs();
    assert.deepEqual((await create({ branch: 'r', ref: 'main' }, reporter.token)).statusCode, 403);
    const hidden = await create({ branch: 's', ref: 'main' }, stranger.token);
    assert.deepEqual([hidden.statusCode, hidden.json], [404, { message: '404 Project Not Found' }]);
    assert.equal((await create({ branch: 'v', ref: 'main' }, null)).statusCode, 404);
    assert.equal((await remove('from-branch', reporter.token)).statusCode, 403);
    assert.equal((await remove('from-branch', stranger.token)).statusCode, 404);
    assert.equal((await remove('from-branch', null)).statusCode, 404);
    assert.deepEqual(await refs(), before);
  });

  it('deletes a branch: 204, and git no longer has it; the rest stay where they were', async () => {
    await t.ok('POST', `/projects/${P}/repository/branches`, developer.token, { branch: 'doomed', ref: 'main' }, 201);
    const before = (await refs()).filter((r) => !r.startsWith('doomed '));
    const res = await remove('doomed');
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assert.deepEqual(await refs(), before);
    const gone = await t.api('GET', `/projects/${P}/repository/branches/doomed`, developer.token);
    assert.deepEqual([gone.statusCode, gone.json], [404, { message: '404 Branch Not Found' }]);
  });

  it('refuses to delete the default branch, an unknown one, an invalid name, and one changed since a date', async () => {
    const before = await refs();
    const main = await remove('main');
    assert.deepEqual(
      [main.statusCode, main.json],
      [400, { message: 'The default branch of a project cannot be deleted.' }],
    );
    const unknown = await remove('foobar');
    assert.deepEqual([unknown.statusCode, unknown.json], [404, { message: '404 Branch Not Found' }]);
    const invalid = await remove('branch*');
    assert.deepEqual([invalid.statusCode, invalid.json], [400, { message: 'The branch refname is invalid' }]);
    const got = await t.api('GET', `/projects/${P}/repository/branches/${e('branch*')}`, developer.token);
    assert.deepEqual([got.statusCode, got.json], [400, { message: 'The branch refname is invalid' }]);
    for (const name of ['HEAD', 'refs/heads/main']) {
      const res = await remove(name);
      assert.deepEqual([res.statusCode, res.json], [400, { message: 'The branch refname is invalid' }], name);
    }
    // Its commit was authored after this date: 412, as GitLab's destroy_conditionally! answers.
    const stale = await remove('from-branch', developer.token, {
      'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT',
    });
    assert.deepEqual([stale.statusCode, stale.json], [412, { message: '412 Precondition Failed' }]);
    assert.deepEqual(await refs(), before);
    const later = await remove('from-branch', developer.token, {
      'if-unmodified-since': new Date(Date.now() + 60_000).toUTCString(),
    });
    assert.equal(later.statusCode, 204, later.body);
  });

  it("an empty repository is first given its default branch, an empty README.md, as GitLab's", async () => {
    const empty = (await t.ok('POST', '/projects', alice.token, { path: 'empty', visibility: 'private' }, 201)).id;
    assert.equal(await t.gitDir('project', empty), null);
    const res = await create({ branch: 'first', ref: 'main' }, alice.token, empty);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(await git(empty, 'rev-parse', 'refs/heads/first'), await git(empty, 'rev-parse', 'refs/heads/main'));
    assert.equal(await git(empty, 'ls-tree', '--name-only', 'main'), 'README.md');
    assert.equal(await git(empty, 'cat-file', '-s', 'main:README.md'), '0');
    assert.equal(
      await git(empty, 'log', '-1', '--format=%s %an', 'main'),
      `Add README.md ${(await t.ok('GET', '/user', alice.token, undefined, 200)).name}`,
    );
    assert.equal(await git(empty, 'fsck', '--strict', '--no-progress'), '');
  });

  it('of two requests making one branch at once, one wins and the other is told it exists', async () => {
    const head = await git(P, 'rev-parse', 'main');
    const parent = await git(P, 'rev-parse', 'main~1');
    const results = await Promise.all([
      create({ branch: 'twice', ref: head }),
      create({ branch: 'twice', ref: parent }),
    ]);
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 400]);
    const lost = results.find((r) => r.statusCode === 400)!;
    assert.deepEqual(lost.json, { message: 'Branch already exists' });
    const won = results.find((r) => r.statusCode === 201)!;
    assert.equal(await git(P, 'rev-parse', 'refs/heads/twice'), won.json.commit.id);
    assert.ok([head, parent].includes(won.json.commit.id));
  });
});

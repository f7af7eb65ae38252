// POST /projects/:id/repository/commits (GitLab's lib/api/commits.rb, Commits::CreateService, Files::MultiService):
// several changes as one commit, each applied to what the ones before it made; a new branch from start_branch or
// start_sha, force; every refusal with GitLab's message and nothing written. git, reading the node's copy of the
// repository, is the oracle of what the commit holds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';

describe('POST /projects/:id/repository/commits', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, developer: U, reporter: U, stranger: U;
  let P: number;

  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' });
  const commit = (body: Record<string, unknown>, token: string | null = developer.token, project = P) =>
    t.api('POST', `/projects/${project}/repository/commits`, token, { commit_message: 'change', ...body });
  const head = async (branch = 'main') => (await git('rev-parse', `refs/heads/${branch}`)).trim();
  const refused = async (body: Record<string, unknown>, status: number, json: unknown) => {
    const before = await git('for-each-ref');
    const res = await commit(body);
    assert.deepEqual([res.statusCode, res.json], [status, json], JSON.stringify(body));
    assert.equal(await git('for-each-ref'), before, 'nothing moved');
  };

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
    const res = await commit(
      {
        branch: 'main',
        actions: [
          { action: 'create', file_path: 'a.txt', content: 'one\n' },
          { action: 'create', file_path: 'dir/b.txt', content: 'two\n' },
          { action: 'create', file_path: 'run.sh', content: 'echo hi\n' },
          { action: 'create', file_path: 'old/c.txt', content: 'three\n' },
        ],
      },
      alice.token,
    );
    assert.equal(res.statusCode, 201, res.body);
  });
  after(() => t.close());

  it('makes one commit of every kind of change: 201 with the CommitDetail GET gives, and git has each change', async () => {
    const parent = await head();
    const res = await commit({
      branch: 'main',
      commit_message: 'Many changes\n\nAt once.',
      author_name: 'Ann Author',
      author_email: 'ann@example.com',
      actions: [
        { action: 'update', file_path: 'a.txt', content: 'ONE\n' },
        { action: 'move', previous_path: 'dir/b.txt', file_path: 'moved/b.txt' },
        {
          action: 'move',
          previous_path: 'old/c.txt',
          file_path: 'c2.txt',
          content: 'dGhyZWUhCg==',
          encoding: 'base64',
        },
        { action: 'chmod', file_path: 'run.sh', execute_filemode: true },
        { action: 'create', file_path: 'new.txt', content: 'new' },
        { action: 'update', file_path: 'new.txt', content: 'newer' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = await head();
    assert.equal(res.json.id, id);
    assert.deepEqual(res.json.parent_ids, [parent]);
    assert.equal(res.json.title, 'Many changes');
    assert.deepEqual([res.json.author_name, res.json.author_email], ['Ann Author', 'ann@example.com']);
    assert.equal(res.json.web_url, `${BASE}/alice/code/-/commit/${id}`);
    const shown = await t.ok('GET', `/projects/${P}/repository/commits/${id}`, developer.token, undefined, 200);
    assert.deepEqual(res.json, shown);
    // git's own account of the commit.
    assert.equal(
      await git('show', '--name-status', '--format=', '-M', id),
      'M\ta.txt\nA\tc2.txt\nR100\tdir/b.txt\tmoved/b.txt\nA\tnew.txt\nD\told/c.txt\nM\trun.sh\n',
    );
    assert.equal(await git('show', `${id}:a.txt`), 'ONE\n');
    assert.equal(await git('show', `${id}:moved/b.txt`), 'two\n');
    assert.equal(await git('show', `${id}:c2.txt`), 'three!\n');
    assert.equal(await git('show', `${id}:new.txt`), 'newer');
    assert.match(await git('ls-tree', id, 'run.sh'), /^100755 blob /);
    const numstat = (await git('show', '--numstat', '--format=', '-M', id)).trim().split('\n');
    const [additions, deletions] = numstat
      .map((l) => l.split('\t').map(Number))
      .reduce(([a, d], [x, y]) => [a + x, d + y], [0, 0]);
    assert.deepEqual(res.json.stats, { additions, deletions, total: additions + deletions });
    assert.equal(await git('fsck', '--strict', '--no-progress'), '');
  });

  it('starts a new branch from start_branch or start_sha; an existing one only with force', async () => {
    const main = await head();
    const first = (await git('rev-parse', 'main~1')).trim();
    const fromBranch = await commit({
      branch: 'feature',
      start_branch: 'main',
      actions: [{ action: 'create', file_path: 'f.txt' }],
    });
    assert.equal(fromBranch.statusCode, 201, fromBranch.body);
    assert.deepEqual(fromBranch.json.parent_ids, [main]);
    assert.equal(await git('show', 'feature:f.txt'), '');
    const fromSha = await commit({
      branch: 'old',
      start_sha: first,
      actions: [{ action: 'delete', file_path: 'a.txt' }],
    });
    assert.equal(fromSha.statusCode, 201, fromSha.body);
    assert.deepEqual(fromSha.json.parent_ids, [first]);
    await refused({ branch: 'old', start_branch: 'main', actions: [{ action: 'create', file_path: 'x' }] }, 400, {
      message: "A branch called 'old' already exists. Switch to that branch in order to make changes",
    });
    const forced = await commit({
      branch: 'old',
      start_branch: 'main',
      force: true,
      actions: [{ action: 'create', file_path: 'x', content: 'x' }],
    });
    assert.equal(forced.statusCode, 201, forced.body);
    assert.deepEqual(forced.json.parent_ids, [main]);
    assert.equal(await head('old'), forced.json.id);
    assert.equal(await head(), main, 'main stays');
  });

  it('refuses what GitLab refuses, with its message, and writes nothing', async () => {
    const main = await head();
    const cases: [Record<string, unknown>, number, unknown][] = [
      [
        { branch: 'main', actions: [{ action: 'create', file_path: 'a.txt', content: 'x' }] },
        400,
        { message: 'A file with this name already exists' },
      ],
      [
        { branch: 'main', actions: [{ action: 'update', file_path: 'nope.txt', content: 'x' }] },
        400,
        { message: "A file with this name doesn't exist" },
      ],
      [
        { branch: 'main', actions: [{ action: 'create', file_path: 'moved', content: 'x' }] },
        400,
        { message: 'A directory with this name already exists' },
      ],
      [
        // The second change fails: the first is not kept either.
        {
          branch: 'main',
          actions: [
            { action: 'create', file_path: 'fine.txt', content: 'x' },
            { action: 'delete', file_path: 'nope.txt' },
          ],
        },
        400,
        { message: "A file with this name doesn't exist" },
      ],
      [
        { branch: 'nowhere', actions: [{ action: 'create', file_path: 'x' }] },
        400,
        { message: 'You can only create or edit files when you are on a branch' },
      ],
      [
        { branch: 'n', start_sha: 'abc', actions: [{ action: 'create', file_path: 'x' }] },
        400,
        { message: "Invalid start_sha 'abc'" },
      ],
      [
        { branch: 'n', start_sha: 'a'.repeat(40), actions: [{ action: 'create', file_path: 'x' }] },
        400,
        { message: `Cannot find start_sha '${'a'.repeat(40)}'` },
      ],
      [
        { branch: 'bad name', start_branch: 'main', actions: [{ action: 'create', file_path: 'x' }] },
        400,
        { message: "Something went wrong when we tried to create 'bad name' for you: Branch name is invalid" },
      ],
      [
        { branch: 'n', start_branch: 'main', start_sha: main, actions: [{ action: 'create', file_path: 'x' }] },
        400,
        { error: 'start_branch, start_sha are mutually exclusive' },
      ],
      [
        {
          branch: 'main',
          actions: [
            { action: 'move', file_path: 'x' },
            { action: 'update', file_path: 'a.txt' },
          ],
        },
        400,
        { error: 'actions[0][previous_path] is missing, actions[1][content] is missing' },
      ],
      [
        { branch: 'main', actions: [{ action: 'copy', file_path: 'x' }] },
        400,
        { error: 'actions[0][action] does not have a valid value' },
      ],
      [{ branch: 'main' }, 400, { error: 'actions is missing' }],
      [
        {
          branch: 'main',
          actions: [
            { action: 'create', file_path: 'ok.txt' },
            { action: 'create', file_path: 'a/../../x' },
          ],
        },
        400,
        { message: '400 Bad request - Invalid file path' },
      ],
      // A NUL ends a name in a git tree: written, 'a\0b' made a tree git cannot read (and whose reading ran the
      // server out of memory), '\0' one with an empty name. D17 leaves paths to their own rules.
      ...['a\u0000b', '\u0000', 'dir/x\u0000'].map((path): [Record<string, unknown>, number, unknown] => [
        { branch: 'main', actions: [{ action: 'create', file_path: path, content: 'x' }] },
        400,
        { message: '400 Bad request - Invalid file path' },
      ]),
      [
        { branch: 'main', actions: [{ action: 'move', file_path: 'moved.txt', previous_path: 'a.txt\u0000' }] },
        400,
        { message: '400 Bad request - Invalid file path' },
      ],
    ];
    for (const [body, status, json] of cases) await refused(body, status, json);
  });

  it("a folder the commit's changes emptied is gone: a file may take its name in the same commit", async () => {
    const made = await commit({
      branch: 'main',
      actions: [
        { action: 'create', file_path: 'box/only.txt', content: 'x' },
        { action: 'create', file_path: 'crate/one.txt', content: 'y' },
      ],
    });
    assert.equal(made.statusCode, 201, made.body);
    const res = await commit({
      branch: 'main',
      actions: [
        { action: 'delete', file_path: 'box/only.txt' },
        { action: 'create', file_path: 'box', content: 'now a file' },
        { action: 'move', previous_path: 'crate/one.txt', file_path: 'crate' },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(await git('show', 'main:box'), 'now a file');
    assert.equal(await git('show', 'main:crate'), 'y');
    assert.match(await git('ls-tree', 'main', 'box', 'crate'), /^100644 blob \w+\tbox\n100644 blob \w+\tcrate\n$/);
    // Forced commits of the test before left one no branch names: dangling, not broken.
    assert.equal(await git('fsck', '--strict', '--no-dangling', '--no-progress'), '');
  });

  it("a submodule's entry is no file to update, chmod or move (the tree would name an object not there)", async () => {
    // An entry git makes for a submodule: a commit of another repository, mode 160000.
    const dir = (await t.gitDir('project', P))!;
    const tree = (await git('ls-tree', 'main')).trim();
    const withSub = execFileSync('git', ['--git-dir', dir, 'mktree'], {
      input: `${tree}\n160000 commit ${'1'.repeat(40)}\tsub\n`,
      encoding: 'utf8',
    }).trim();
    const id = execFileSync('git', ['--git-dir', dir, 'commit-tree', withSub, '-p', 'main', '-m', 'sub'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'a',
        GIT_AUTHOR_EMAIL: 'a@b',
        GIT_COMMITTER_NAME: 'a',
        GIT_COMMITTER_EMAIL: 'a@b',
      },
    }).trim();
    execFileSync('git', ['--git-dir', dir, 'update-ref', 'refs/heads/main', id]);
    await t.importGitDir('project', P);
    for (const action of [
      { action: 'chmod', file_path: 'sub', execute_filemode: true },
      { action: 'update', file_path: 'sub', content: 'x' },
      { action: 'move', previous_path: 'sub', file_path: 'elsewhere' },
    ])
      await refused({ branch: 'main', actions: [action] }, 400, { message: "A file with this name doesn't exist" });
    const removed = await commit({ branch: 'main', actions: [{ action: 'delete', file_path: 'sub' }] });
    assert.equal(removed.statusCode, 201, removed.body);
    assert.equal(await git('ls-tree', 'main', 'sub'), '');
  });

  it('refuses a commit that would make more directories than a tree edit holds, before it holds them', async () => {
    // 26 paths of 2,000 new directories each (about 4 KB, as long as a path may be): 52,000 directories.
    const deep = 'a/'.repeat(1999);
    await refused(
      {
        branch: 'main',
        actions: Array.from({ length: 26 }, (_, i) => ({
          action: 'create',
          file_path: `d${i}/${deep}f`,
          content: 'x',
        })),
      },
      400,
      { message: 'The commit would change more than 50000 directories' },
    );
  });

  it('refuses an update of a file changed since the last_commit_id the caller knew, naming the file', async () => {
    const before = (await git('rev-parse', 'main~1')).trim();
    await t.ok(
      'PUT',
      `/projects/${P}/repository/files/a.txt`,
      developer.token,
      { branch: 'main', content: 'changed\n', commit_message: 'meanwhile' },
      200,
    );
    await refused(
      { branch: 'main', actions: [{ action: 'update', file_path: 'a.txt', content: 'x', last_commit_id: before }] },
      400,
      { message: 'The file has changed since you started editing it: a.txt' },
    );
    const known = (await git('rev-parse', 'main')).trim();
    const res = await commit({
      branch: 'main',
      actions: [{ action: 'update', file_path: 'a.txt', content: 'mine\n', last_commit_id: known }],
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  it('is for developers: a reporter 403, someone who cannot see it 404; a start_project outside its fork network 403', async () => {
    const body = { branch: 'main', actions: [{ action: 'create', file_path: 'r.txt' }] };
    assert.equal((await commit(body, reporter.token)).statusCode, 403);
    const hidden = await commit(body, stranger.token);
    assert.deepEqual([hidden.statusCode, hidden.json], [404, { message: '404 Project Not Found' }]);
    assert.equal((await commit(body, null)).statusCode, 401);
    const other = (await t.ok('POST', '/projects', developer.token, { path: 'other' }, 201)).id;
    await refused({ ...body, start_project: String(other) }, 403, {
      message: '403 Forbidden - Project is not included in the fork network for DEV / other',
    });
  });

  it('an empty repository gets its first branch from the commit, which becomes the default; stats=false leaves them out', async () => {
    const empty = (await t.ok('POST', '/projects', alice.token, { path: 'empty', default_branch: 'trunk' }, 201)).id;
    const update = await commit(
      { branch: 'trunk', actions: [{ action: 'update', file_path: 'a', content: 'x' }] },
      alice.token,
      empty,
    );
    assert.deepEqual([update.statusCode, update.json], [400, { message: "A file with this name doesn't exist" }]);
    const res = await commit(
      { branch: 'trunk', stats: false, actions: [{ action: 'create', file_path: 'README.md', content: '# Hi' }] },
      alice.token,
      empty,
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.stats, undefined);
    assert.deepEqual(res.json.parent_ids, []);
    const project = await t.ok('GET', `/projects/${empty}`, alice.token, undefined, 200);
    assert.equal(project.default_branch, 'trunk');
  });
});

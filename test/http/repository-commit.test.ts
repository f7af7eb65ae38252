// GET /projects/:id/repository/commits/:sha (docs/gitlab-compatibility.md#repository-files): one commit by id,
// branch or tag as GitLab's CommitDetail, its line counts as git's numstat counts them (git itself is the oracle,
// on the node's copy of the repository), and the trailers of its message as git reads them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const e = encodeURIComponent;

describe('GET /projects/:id/repository/commits/:sha', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, stranger: U;
  let P: number;
  const commits: Record<string, string> = {};

  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' }).trim();
  /** Lines added and deleted by the commit, as `git show --numstat` counts them (a binary file counts none). */
  const numstat = async (id: string) => {
    let [additions, deletions] = [0, 0];
    for (const line of (await git('show', '--numstat', '--format=', '-M', id)).split('\n').filter(Boolean)) {
      const [added, deleted] = line.split('\t');
      additions += added === '-' ? 0 : Number(added);
      deletions += deleted === '-' ? 0 : Number(deleted);
    }
    return { additions, deletions, total: additions + deletions };
  };
  const write = async (method: string, path: string, content: string, message: string) => {
    await t.ok(
      method,
      `/projects/${P}/repository/files/${e(path)}`,
      alice.token,
      { branch: 'main', content, commit_message: message },
      method === 'POST' ? 201 : 200,
    );
    return (await t.ok('GET', `/projects/${P}/repository/commits?per_page=1`, alice.token, undefined, 200))[0]
      .id as string;
  };
  const get = (ref: string, query = '', token: string | null = alice.token) =>
    t.request({ method: 'GET', url: `/api/v4/projects/${P}/repository/commits/${e(ref)}${query}`, token });

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    stranger = await t.user('stranger');
    P = (await t.ok('POST', '/projects', alice.token, { path: 'code', visibility: 'private' }, 201)).id;
    commits.first = await write('POST', 'a.txt', 'one\ntwo\nthree\n', 'Add a');
    commits.second = await write(
      'PUT',
      'a.txt',
      'one\n2\nthree\nfour\n',
      'Change a\n\nWhy it changed.\n\nSigned-off-by: Alice <alice@example.com>\nCo-authored-by: Bob\n  Builder <bob@example.com>\nSigned-off-by: Carol <carol@example.com>',
    );
    // With a .gitattributes in the tree, the rows leave the counting to git.
    commits.third = await write('POST', '.gitattributes', '*.bin binary\n', 'Attributes\n\nNot: a trailer\nnor this');
  });
  after(() => t.close());

  it('answers the commit as the commits list does, with its line counts, no status and no pipeline', async () => {
    for (const key of ['first', 'second', 'third']) {
      const id = commits[key];
      const res = await get(id);
      assert.equal(res.statusCode, 200, res.body);
      const listed = (
        await t.ok('GET', `/projects/${P}/repository/commits?per_page=100&trailers=true`, alice.token, undefined, 200)
      ).find((c: { id: string }) => c.id === id);
      const { stats, status, project_id, last_pipeline, ...rest } = res.json;
      assert.deepEqual(rest, listed, key);
      assert.deepEqual(stats, await numstat(id), key);
      assert.deepEqual([status, project_id, last_pipeline], [null, P, null]);
      assert.deepEqual(Object.keys(res.json).slice(-5), ['web_url', 'stats', 'status', 'project_id', 'last_pipeline']);
      assert.equal(rest.web_url, `${BASE}/alice/code/-/commit/${id}`);
    }
  });

  it("reads the message's trailers as git does: the last paragraph, unfolded, each key's last value and all of them", async () => {
    const second = (await get(commits.second)).json;
    assert.deepEqual(second.trailers, {
      'Signed-off-by': 'Carol <carol@example.com>',
      'Co-authored-by': 'Bob Builder <bob@example.com>',
    });
    assert.deepEqual(second.extended_trailers, {
      'Signed-off-by': ['Alice <alice@example.com>', 'Carol <carol@example.com>'],
      'Co-authored-by': ['Bob Builder <bob@example.com>'],
    });
    const oracle = await git('log', '-1', '--format=%(trailers:unfold,separator=%x00)', commits.second);
    assert.deepEqual(
      oracle.split('\0'),
      Object.entries(second.extended_trailers)
        .flatMap(([key, values]) => (values as string[]).map((v) => `${key}: ${v}`))
        .sort((a, b) => oracle.indexOf(a) - oracle.indexOf(b)),
    );
    for (const key of ['first', 'third']) {
      const res = (await get(commits[key])).json;
      assert.deepEqual([res.trailers, res.extended_trailers], [{}, {}], key);
      assert.equal(await git('log', '-1', '--format=%(trailers)', commits[key]), '', key);
    }
  });

  it('the commits list reads trailers only when asked (trailers=true), as GitLab asks Gitaly', async () => {
    const list = async (query: string) =>
      (await t.ok('GET', `/projects/${P}/repository/commits?per_page=100${query}`, alice.token, undefined, 200)).find(
        (c: { id: string }) => c.id === commits.second,
      );
    const without = await list('');
    assert.deepEqual([without.trailers, without.extended_trailers], [{}, {}]);
    const asked = await list('&trailers=true');
    assert.deepEqual(asked.trailers, (await get(commits.second)).json.trailers);
    assert.equal(Object.keys(asked.trailers).length, 2);
  });

  it("the commits list's with_stats adds each commit's line counts, as git's numstat counts them", async () => {
    const listed = await t.ok(
      'GET',
      `/projects/${P}/repository/commits?per_page=100&with_stats=true`,
      alice.token,
      undefined,
      200,
    );
    assert.deepEqual(
      listed.map((c: { id: string }) => c.id),
      [commits.third, commits.second, commits.first],
    );
    for (const c of listed) {
      assert.deepEqual(c.stats, await numstat(c.id), c.title);
      assert.deepEqual(Object.keys(c).slice(-2), ['web_url', 'stats']);
    }
    const plain = await t.ok('GET', `/projects/${P}/repository/commits?per_page=100`, alice.token, undefined, 200);
    assert.ok(plain.every((c: object) => !('stats' in c)));
  });

  it('finds a commit by short id, branch or HEAD; stats=false leaves the counts out', async () => {
    for (const ref of ['main', commits.third.slice(0, 8), 'HEAD'])
      assert.equal((await get(ref)).json.id, commits.third, ref);
    const without = await get(commits.second, '?stats=false');
    assert.equal(without.statusCode, 200);
    assert.ok(!('stats' in without.json));
  });

  it('is 404 Commit Not Found for what names no commit, and hides the project from those who cannot read it', async () => {
    for (const ref of ['nope', '0'.repeat(40), 'a'.repeat(4000)]) {
      const res = await get(ref);
      assert.equal(res.statusCode, 404, ref.slice(0, 10));
      assert.deepEqual(res.json, { message: '404 Commit Not Found' });
    }
    const hidden = await get(commits.first, '', stranger.token);
    assert.deepEqual([hidden.statusCode, hidden.json], [404, { message: '404 Project Not Found' }]);
    const bad = await get(commits.first, '?stats=maybe');
    assert.deepEqual([bad.statusCode, bad.json], [400, { error: 'stats is invalid' }]);
  });

  it("…/diff gives each file's patch from its first hunk, its paths and modes, as git shows them, paginated", async () => {
    await t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      {
        branch: 'main',
        commit_message: 'Prepare',
        actions: [
          { action: 'create', file_path: 'b.txt', content: 'alpha\nbeta\ngamma\ndelta\n' },
          { action: 'create', file_path: 'run.sh', content: 'echo hi\n' },
          { action: 'create', file_path: 'gone.txt', content: 'bye\n' },
        ],
      },
      201,
    );
    const made = await t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      {
        branch: 'main',
        commit_message: 'Many',
        actions: [
          { action: 'update', file_path: 'a.txt', content: 'one\n2\nthree\nfour\nfive\n' },
          { action: 'move', previous_path: 'b.txt', file_path: 'c.txt', content: 'alpha\nbeta\ngamma\nDELTA\n' },
          { action: 'delete', file_path: 'gone.txt' },
          { action: 'chmod', file_path: 'run.sh', execute_filemode: true },
          {
            action: 'create',
            file_path: 'img.bin',
            content: Buffer.from([0, 1, 2, 255]).toString('base64'),
            encoding: 'base64',
          },
        ],
      },
      201,
    );
    const res = await get(made.id, '/diff');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-total'], '5');
    // git's own account: each file's raw line (modes, status, paths) and its patch from the first hunk on.
    const raw = (await git('diff-tree', '-r', '-M', '--no-commit-id', made.id)).split('\n');
    const expected = raw.map((line) => {
      const [meta, ...paths] = line.split('\t');
      const [oldMode, newMode, , , status] = meta.slice(1).split(' ');
      return { status: status[0], oldMode, newMode, oldPath: paths[0], newPath: paths[paths.length - 1] };
    });
    const byPath = new Map<string, any>(res.json.map((d: any) => [d.new_path, d]));
    assert.equal(byPath.size, expected.length);
    for (const f of expected) {
      const d: any = byPath.get(f.newPath);
      assert.ok(d, f.newPath);
      assert.deepEqual(
        [d.old_path, d.a_mode, d.b_mode, d.new_file, d.renamed_file, d.deleted_file],
        [
          f.oldPath,
          String(Number.parseInt(f.oldMode, 8).toString(8)),
          String(Number.parseInt(f.newMode, 8).toString(8)),
          f.status === 'A',
          f.status === 'R',
          f.status === 'D',
        ],
        f.newPath,
      );
      const patch = await git('show', '--format=', '-M', made.id, '--', f.oldPath, f.newPath);
      const hunks = patch.includes('\n@@') ? patch.slice(patch.indexOf('\n@@') + 1) : '';
      assert.equal(d.diff.trimEnd(), hunks, f.newPath);
    }
    assert.equal(byPath.get('img.bin').diff, '', 'a binary file has no patch');
    const second = await get(made.id, '/diff?per_page=2&page=2');
    assert.deepEqual(second.json, res.json.slice(2, 4));
    const missing = await get('0'.repeat(40), '/diff');
    assert.deepEqual([missing.statusCode, missing.json], [404, { message: '404 Commit Not Found' }]);
    assert.equal((await get(made.id, '/diff', stranger.token)).statusCode, 404);
  });
});

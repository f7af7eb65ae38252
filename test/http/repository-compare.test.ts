// GET /projects/:id/repository/compare (GitLab's lib/api/repositories.rb, CompareService, Gitlab::Git::Compare,
// Entities::Compare) and the page its web_url leads to (…/-/compare/<from>...<to>). git on the repository the rows
// hold is the oracle: rev-list for the commits, diff for the files; the commits list API for each commit's entity.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const NO_REF = { message: '404 Ref Not Found' };
/** Who makes the commits git makes here itself. */
const COMMITTER = {
  ...process.env,
  GIT_AUTHOR_NAME: 'o',
  GIT_AUTHOR_EMAIL: 'o@e',
  GIT_COMMITTER_NAME: 'o',
  GIT_COMMITTER_EMAIL: 'o@e',
};

describe('repository compare API and page', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, guest: U, stranger: U;
  let P: number;
  let web: string;
  const compare = (query: string) => `/projects/${P}/repository/compare?${query}`;
  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' }).trim();
  const write = (branch: string, action: 'create' | 'update' | 'delete', path: string, content = '') =>
    t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      { branch, commit_message: `${action} ${path}`, actions: [{ action, file_path: path, content }] },
      201,
    );
  /** The commits list API's entity of each commit, the oracle of the compare's. */
  const listed = async (ids: string[]) => {
    const all = await t.ok(
      'GET',
      `/projects/${P}/repository/commits?all=true&per_page=100`,
      alice.token,
      undefined,
      200,
    );
    return ids.map((id) => all.find((c: { id: string }) => c.id === id));
  };
  const changes = (answer: { diffs: { new_path: string; new_file: boolean; deleted_file: boolean }[] }) =>
    answer.diffs.map((d) => `${d.new_file ? 'A' : d.deleted_file ? 'D' : 'M'}\t${d.new_path}`);

  before(async () => {
    t = await createTestApp();
    [alice, guest, stranger] = [await t.user('alice'), await t.user('guest'), await t.user('stranger')];
    const project = await t.ok('POST', '/projects', alice.token, { path: 'repo', visibility: 'private' }, 201);
    P = project.id;
    web = new URL(project.web_url).pathname;
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: guest.id, access_level: 10 }, 201);
    await write('main', 'create', 'README.md', '# repo\n');
    await write('main', 'create', 'a.txt', 'one\ntwo\n');
    await t.ok('POST', `/projects/${P}/repository/branches`, alice.token, { branch: 'feature/x', ref: 'main' }, 201);
    await write('feature/x', 'create', 'b.txt', 'bee\n');
    await write('feature/x', 'update', 'a.txt', 'one\nTWO\n');
    await write('main', 'create', 'c.txt', 'sea\n');
  });
  after(() => t.close());

  it('lists what `to` has and `from` has not, oldest first, and the diff from their merge base', async () => {
    const answer = await t.ok('GET', compare('from=main&to=feature%2Fx'), alice.token, undefined, 200);
    const ids = (await git('rev-list', '--reverse', 'main..feature/x')).split('\n');
    const base = await git('merge-base', 'main', 'feature/x');
    const head = await git('rev-parse', 'feature/x');
    assert.equal(ids.length, 2);
    const [first, second] = await listed(ids);
    assert.deepEqual(Object.keys(answer), [
      'commit',
      'commits',
      'diffs',
      'compare_timeout',
      'compare_same_ref',
      'web_url',
    ]);
    assert.deepEqual(answer.commits, [first, second]);
    assert.deepEqual(answer.commit, second);
    assert.deepEqual(changes(answer), (await git('diff', '--name-status', base, head)).split('\n'));
    const a = answer.diffs.find((d: { new_path: string }) => d.new_path === 'a.txt');
    const patch = await git('diff', base, head, '--', 'a.txt');
    assert.equal(a.diff, `${patch.slice(patch.indexOf('@@'))}\n`);
    assert.deepEqual(
      { ...a, diff: undefined },
      {
        diff: undefined,
        new_path: 'a.txt',
        old_path: 'a.txt',
        a_mode: '100644',
        b_mode: '100644',
        new_file: false,
        renamed_file: false,
        deleted_file: false,
      },
    );
    assert.equal(answer.compare_timeout, false);
    assert.equal(answer.compare_same_ref, false);
    assert.equal(answer.web_url, `http://localhost:80${web}/-/compare/${base}...${head}`);

    // The other way round: main's own commit.
    const back = await t.ok('GET', compare('from=feature%2Fx&to=main'), alice.token, undefined, 200);
    assert.deepEqual(back.commits, await listed([await git('rev-parse', 'main')]));
    assert.deepEqual(changes(back), ['A\tc.txt']);
  });

  it('straight=true diffs `from` itself against `to`; unidiff heads each patch with its --- and +++ lines', async () => {
    const answer = await t.ok('GET', compare('from=main&to=feature%2Fx&straight=true'), alice.token, undefined, 200);
    assert.deepEqual(changes(answer), (await git('diff', '--name-status', 'main', 'feature/x')).split('\n'));
    assert.ok(changes(answer).includes('D\tc.txt'));
    assert.equal(answer.commits.length, 2);
    const from = await git('rev-parse', 'main');
    assert.match(answer.web_url, new RegExp(`/-/compare/${from}\\.\\.\\.`));
    const uni = await t.ok('GET', compare('from=main&to=feature%2Fx&unidiff=true'), alice.token, undefined, 200);
    const byPath = Object.fromEntries(uni.diffs.map((d: { new_path: string; diff: string }) => [d.new_path, d.diff]));
    assert.match(byPath['a.txt'], /^--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ /);
    assert.match(byPath['b.txt'], /^--- \/dev\/null\n\+\+\+ b\/b\.txt\n@@ /);
  });

  it('the same commit twice is nothing to compare; a ref that names no commit is 404 Ref Not Found', async () => {
    const same = await t.ok('GET', compare('from=feature%2Fx&to=feature%2Fx'), alice.token, undefined, 200);
    const head = await git('rev-parse', 'feature/x');
    assert.deepEqual(same, {
      commit: null,
      commits: [],
      diffs: [],
      compare_timeout: false,
      compare_same_ref: true,
      web_url: `http://localhost:80${web}/-/compare/${head}...${head}`,
    });
    for (const query of ['from=main&to=nowhere', 'from=nowhere&to=main', 'from=&to=main', 'from=main~50&to=main'])
      await t.fails('GET', compare(query), alice.token, undefined, 404, NO_REF);
    await t.fails('GET', compare('to=main'), alice.token, undefined, 400, { error: 'from is missing' });
    await t.fails('GET', compare(`from=main&to=main&from_project_id=${P + 1000}`), alice.token, undefined, 400, {
      message: `Target project id:${P + 1000} is not a fork of project id:${P}`,
    });
    // The project as the request named it (GitLab's params[:id]).
    const byPath = `/projects/alice%2Frepo/repository/compare?from=main&to=main&from_project_id=${P + 1000}`;
    await t.fails('GET', byPath, alice.token, undefined, 400, {
      message: `Target project id:${P + 1000} is not a fork of project id:alice/repo`,
    });
  });

  it('merge_base answers the best common ancestor of two refs or more, as git merge-base', async () => {
    const base = (await listed([await git('merge-base', 'main', 'feature/x')]))[0];
    const mergeBase = (query: string) => `/projects/${P}/repository/merge_base?${query}`;
    assert.deepEqual(await t.ok('GET', mergeBase('refs[]=main&refs[]=feature%2Fx'), alice.token, undefined, 200), base);
    assert.deepEqual(await t.ok('GET', mergeBase('refs=main,feature%2Fx'), alice.token, undefined, 200), base);
    // Three: the first against a merge of the others.
    const three = ['feature/x', 'main~1', 'main'];
    const expected = (await listed([await git('merge-base', ...three)]))[0];
    const query = three.map((r) => `refs[]=${encodeURIComponent(r)}`).join('&');
    assert.deepEqual(await t.ok('GET', mergeBase(query), alice.token, undefined, 200), expected);

    await t.fails('GET', mergeBase('refs[]=main'), alice.token, undefined, 400, { message: 'Provide at least 2 refs' });
    await t.fails('GET', mergeBase(''), alice.token, undefined, 400, { error: 'refs is missing' });
    await t.fails('GET', mergeBase('refs[]=main&refs[]=nope'), alice.token, undefined, 400, {
      message: 'Could not find ref: nope',
    });
    await t.fails('GET', mergeBase('refs[]=nope&refs[]=main&refs[]=nada'), alice.token, undefined, 400, {
      message: 'Could not find refs: nope, nada',
    });
    const many = Array.from({ length: 101 }, () => 'refs[]=main').join('&');
    await t.fails('GET', mergeBase(many), alice.token, undefined, 400, { message: 'Provide at most 100 refs' });

    // A branch of a history of its own shares no ancestor with main.
    const dir = (await t.gitDir('project', P))!;
    const run = (...args: string[]) =>
      execFileSync('git', ['--git-dir', dir, ...args], {
        encoding: 'utf8',
        env: COMMITTER,
      }).trim();
    const orphan = run('commit-tree', run('hash-object', '-t', 'tree', '-w', '/dev/null'), '-m', 'orphan');
    run('update-ref', 'refs/heads/orphan', orphan);
    await t.importGitDir('project', P);
    await t.fails('GET', mergeBase('refs[]=main&refs[]=orphan'), alice.token, undefined, 404, {
      message: '404 Merge Base Not Found',
    });
    // Compared, they share nothing: the diff is all of `to`.
    const apart = await t.ok('GET', compare('from=orphan&to=main'), alice.token, undefined, 200);
    assert.deepEqual(changes(apart).sort(), ['A\tREADME.md', 'A\ta.txt', 'A\tc.txt']);
    assert.equal(apart.commits.length, Number(await git('rev-list', '--count', 'main')));
    await t.expect('DELETE', `/projects/${P}/repository/branches/orphan`, alice.token, undefined, 204);
  });

  it('lists the newest commits whose messages come to 8 MiB at most, compare_timeout then true', async () => {
    // A commit may be 1 MB, and 1 MB of one letter packs into a few hundred bytes: a push of a small pack brought
    // thousands of them, and their messages, listed whole, 1.8 GB of JSON (a 500 after seconds of a stopped loop).
    const dir = (await t.gitDir('project', P))!;
    const message = 'm'.repeat(900_000);
    let tip = await git('rev-parse', 'main');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      tip = execFileSync('git', ['--git-dir', dir, 'commit-tree', `${tip}^{tree}`, '-p', tip, '-F', '-'], {
        input: message,
        encoding: 'utf8',
        env: COMMITTER,
      }).trim();
      ids.push(tip);
    }
    await git('update-ref', 'refs/heads/big', tip);
    await t.importGitDir('project', P);
    const answer = await t.ok('GET', compare('from=main&to=big'), alice.token, undefined, 200);
    // 9 messages of 900,001 characters are 8,100,009; a tenth would pass 8 MiB.
    assert.deepEqual(
      answer.commits.map((c: { id: string }) => c.id),
      ids.slice(3),
    );
    assert.equal(answer.commit.id, tip);
    assert.equal(answer.compare_timeout, true);
    assert.deepEqual(answer.diffs, []);
    await t.expect('DELETE', `/projects/${P}/repository/branches/big`, alice.token, undefined, 204);
  });

  it("needs the project's code: 403 for a guest of a private project, 404 for a stranger", async () => {
    await t.fails('GET', compare('from=main&to=feature%2Fx'), guest.token, undefined, 403, {
      message: '403 Forbidden',
    });
    await t.fails('GET', compare('from=main&to=feature%2Fx'), stranger.token, undefined, 404, {
      message: '404 Project Not Found',
    });
  });

  it('the web_url opens a page with the commits, each linking to its page, and the changed files', async () => {
    const password = 'a-long-password-for-pages';
    const reader = await t.ok(
      'POST',
      '/users',
      ROOT_TOKEN,
      { username: 'reader', email: 'r@example.com', name: 'R', password },
      201,
    );
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: reader.id, access_level: 20 }, 201);
    const cookie = await signInCookie(t, 'reader', password);
    const open = (url: string) => t.request({ method: 'GET', url, token: null, headers: { cookie } });
    const answer = await t.ok('GET', compare('from=main&to=feature%2Fx'), alice.token, undefined, 200);
    const page = await open(new URL(answer.web_url).pathname);
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    const list = /<ol class="compared-commits">([\s\S]*?)<\/ol>/.exec(page.body)?.[1] ?? '';
    const links = [...list.matchAll(/<li><a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(
      links,
      answer.commits.map((c: { id: string; title: string }) => [`http://localhost:80${web}/-/commit/${c.id}`, c.title]),
    );
    const files = [...page.body.matchAll(/<h2 id="diff-\d+-name"><code>([^<]+)<\/code>/g)].map((m) => m[1]);
    assert.deepEqual(files, ['a.txt', 'b.txt']);
    for (const [url] of links) assert.equal((await open(new URL(url).pathname)).statusCode, 200);
    // By branch names too, as GitLab's page takes them; the same commit twice, and a ref that is not there.
    const byName = await open(`${web}/-/compare/main...feature/x`);
    assert.equal(byName.statusCode, 200);
    assert.deepEqual(
      [...byName.body.matchAll(/<h2 id="diff-\d+-name"><code>([^<]+)<\/code>/g)].map((m) => m[1]),
      files,
    );
    const same = await open(`${web}/-/compare/main...main`);
    assert.equal(same.statusCode, 200);
    assert.match(same.body, /These are the same commit: there is nothing to compare\./);
    const none = await open(`${web}/-/compare/main...nowhere`);
    assert.equal(none.statusCode, 404);
    // A visitor is sent to sign in, as for any page of a private project.
    const visitor = await t.request({ method: 'GET', url: `${web}/-/compare/main...feature/x`, token: null });
    assert.equal(visitor.statusCode, 302);
  });
});

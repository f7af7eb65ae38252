// Repository Files API, tree and commits of a project (docs/gitlab-compatibility.md#repository-files; issue 4).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, gitSync, ROOT_TOKEN as ROOT, type TestApp, turns } from '../helper.ts';
import { objectId } from '../../src/storage/git/objects.ts';
import { fsck } from '../../src/domain/fsck.ts';

const FORBIDDEN = { message: '403 Forbidden' };
const NO_PROJECT = { message: '404 Project Not Found' };
const NO_FILE = { message: '404 File Not Found' };
const NO_TREE = { message: '404 Tree Not Found' };
const BAD_PATH = { error: 'file_path should be a valid file path' };
const NOT_ON_BRANCH = { message: 'You can only create or edit files when you are on a branch' };
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/; // Rails JSON: millisecond precision
const BINARY = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7 + 3) % 256));
const e = encodeURIComponent;

describe('project repository files API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, dev: U, reporter: U, guest: U, stranger: U;
  let P: number; // alice's private project; dev, reporter and guest are members
  const touched = new Set<number>();

  const file = (id: number, p: string, rest = '') => `/projects/${id}/repository/files/${e(p)}${rest}`;
  /** The project's repository as the database holds it (this node's serving cache, brought up to date). */
  const gitDir = async (id: number) => (await t.gitDir('project', id))!;
  const git = async (id: number, ...args: string[]) =>
    execFileSync('git', ['--git-dir', await gitDir(id), ...args], { encoding: 'utf8' }).trim();
  const log = async (id: number, ref = 'main') => (await git(id, 'log', '--format=%an <%ae>|%s', ref)).split('\n');
  const project = async (payload: object, token = alice.token) => {
    const id = (await t.ok('POST', '/projects', token, payload, 201)).id as number;
    touched.add(id);
    return id;
  };
  const entry = async (p: string, type: string, mode: string, ref = 'main') => ({
    id: await git(P, 'rev-parse', `${ref}:${p}`),
    name: p.split('/').pop(),
    type,
    path: p,
    mode,
  });
  const put = (id: number, p: string, body: object, token = dev.token) =>
    t.api('POST', file(id, p), token, { branch: 'main', commit_message: `add ${p}`, ...body });

  before(async () => {
    t = await createTestApp();
    [alice, dev, reporter, guest, stranger] = [
      await t.user('alice'),
      await t.user('dev'),
      await t.user('reporter'),
      await t.user('guest'),
      await t.user('stranger'),
    ];
    P = await project({ path: 'repo', visibility: 'private' });
    for (const [u, level] of [
      [dev, 30],
      [reporter, 20],
      [guest, 10],
    ] as const) {
      await t.expect('POST', `/projects/${P}/members`, alice.token, { user_id: u.id, access_level: level }, 201);
    }
  });
  after(() => t.close());

  it('an empty repository has no commits; the first write creates its branch and makes it the default', async () => {
    const empty = await t.expect('GET', `/projects/${P}/repository/commits`, dev.token, undefined, 200);
    assert.deepEqual(empty.json, []);
    // GitLab's commits list sends no totals (exclude_total_headers), and the page says nothing follows.
    assert.deepEqual([empty.headers['x-total'], empty.headers['x-next-page']], [undefined, '']);
    const res = await put(P, 'hello.txt', { content: 'hello\n' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json, { file_path: 'hello.txt', branch: 'main' });
    for (const [payload, branch] of [
      [{ path: 'trunky', default_branch: 'trunk' }, 'feature'],
      [{ path: 'plain' }, 'develop'],
    ] as const) {
      const id = await project(payload);
      const first = await t.api('POST', file(id, 'a.txt'), alice.token, {
        branch,
        content: 'a',
        commit_message: 'first',
      });
      assert.equal(first.statusCode, 201, first.body);
      assert.deepEqual(first.json, { file_path: 'a.txt', branch });
      assert.equal((await t.ok('GET', `/projects/${id}`, alice.token, undefined, 200)).default_branch, branch);
      assert.equal(await git(id, 'symbolic-ref', 'HEAD'), `refs/heads/${branch}`);
      assert.equal(await git(id, 'for-each-ref', '--format=%(refname)'), `refs/heads/${branch}`);
      const raw = await t.expect('GET', `${file(id, 'a.txt', '/raw')}`, alice.token, undefined, 200);
      assert.equal(raw.body, 'a');
    }
  });

  it('writes text and base64 content; the caller is the default author, author_name/author_email override it', async () => {
    const res = await put(P, 'bin/data.bin', {
      content: BINARY.toString('base64'),
      encoding: 'base64',
      author_name: 'Ann Other',
      author_email: 'ann@example.org',
      commit_message: 'add binary\n\nwith a body',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json, { file_path: 'bin/data.bin', branch: 'main' });
    assert.deepEqual(await log(P), ['Ann Other <ann@example.org>|add binary', 'DEV <dev@example.com>|add hello.txt']);
    assert.deepEqual(
      Buffer.from(execFileSync('git', ['--git-dir', await gitDir(P), 'cat-file', 'blob', 'main:bin/data.bin'])),
      BINARY,
    );
    assert.equal(await git(P, 'cat-file', 'blob', 'main:hello.txt'), 'hello');
  });

  it('updates with PUT, honours execute_filemode, refuses to create an existing or change a missing file', async () => {
    const upd = await t.api('PUT', file(P, 'hello.txt'), dev.token, {
      branch: 'main',
      content: 'hello again\n',
      commit_message: 'update hello',
      execute_filemode: true,
    });
    assert.equal(upd.statusCode, 200, upd.body);
    assert.deepEqual(upd.json, { file_path: 'hello.txt', branch: 'main' });
    assert.match(await git(P, 'ls-tree', 'main', 'hello.txt'), /^100755 blob [0-9a-f]{40}\thello\.txt$/);
    assert.equal((await log(P))[0], 'DEV <dev@example.com>|update hello');
    const head = await git(P, 'rev-parse', 'main');
    const exists = await put(P, 'hello.txt', { content: 'x' });
    assert.equal(exists.statusCode, 400);
    assert.deepEqual(exists.json, { message: 'A file with this name already exists' });
    for (const method of ['PUT', 'DELETE']) {
      const missing = await t.api(method, file(P, 'nope.txt'), dev.token, {
        branch: 'main',
        content: 'x',
        commit_message: 'm',
      });
      assert.equal(missing.statusCode, 400, method);
      assert.deepEqual(missing.json, { message: "A file with this name doesn't exist" });
    }
    assert.equal(await git(P, 'rev-parse', 'main'), head);
  });

  it('GET file answers every field; last_commit_id is the last commit touching the path', async () => {
    const res = await t.expect('GET', `${file(P, 'bin/data.bin')}?ref=main`, reporter.token, undefined, 200);
    const head = await git(P, 'rev-parse', 'main');
    const last = await git(P, 'log', '-1', '--format=%H', 'main', '--', 'bin/data.bin');
    assert.notEqual(last, head);
    assert.deepEqual(res.json, {
      file_name: 'data.bin',
      file_path: 'bin/data.bin',
      size: BINARY.length,
      encoding: 'base64',
      content: BINARY.toString('base64'),
      content_sha256: crypto.createHash('sha256').update(BINARY).digest('hex'),
      ref: 'main',
      blob_id: await git(P, 'rev-parse', 'main:bin/data.bin'),
      commit_id: head,
      last_commit_id: last,
      execute_filemode: false,
    });
    // Each field but the content as an X-Gitlab- header, on GET and on HEAD (go-gitlab's GetFileMetaData).
    const fields = Object.entries(res.json).filter(([key]) => key !== 'content');
    const expectedHeaders = Object.fromEntries(
      fields.map(([key, value]) => [`x-gitlab-${key.replaceAll('_', '-')}`, String(value)]),
    );
    const head2 = await t.request({
      method: 'HEAD',
      url: `/api/v4${file(P, 'bin/data.bin')}?ref=main`,
      token: reporter.token,
    });
    for (const answer of [res, head2]) {
      assert.equal(answer.statusCode, 200);
      const got = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith('x-gitlab-')));
      assert.deepEqual(got, expectedHeaders);
    }
    assert.equal(head2.body, '');
    const bySha = await t.expect(
      'GET',
      `${file(P, 'hello.txt')}?ref=${head.slice(0, 12)}`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(
      [bySha.json.ref, bySha.json.commit_id, bySha.json.last_commit_id, bySha.json.execute_filemode],
      [head.slice(0, 12), head, head, true],
    );
    assert.equal(Buffer.from(bySha.json.content, 'base64').toString(), 'hello again\n');
    const unknownRef = await t.api('GET', `${file(P, 'hello.txt')}?ref=nowhere`, reporter.token);
    assert.equal(unknownRef.statusCode, 404);
    assert.deepEqual(unknownRef.json, { message: '404 Commit Not Found' });
    for (const p of ['missing.txt', 'bin', 'bin/missing']) {
      const missing = await t.api('GET', `${file(P, p)}?ref=main`, reporter.token);
      assert.equal(missing.statusCode, 404, p);
      assert.deepEqual(missing.json, NO_FILE);
    }
    const noRef = await t.api('GET', file(P, 'hello.txt'), reporter.token);
    assert.equal(noRef.statusCode, 400);
    assert.deepEqual(noRef.json, { error: 'ref is missing' });
  });

  it("a read_repository token reads a file and its raw bytes (GitLab's files API takes it for GET and HEAD), nothing else", async () => {
    const { token } = await t.ok(
      'POST',
      `/users/${reporter.id}/personal_access_tokens`,
      ROOT,
      { name: 'files', scopes: ['read_repository'] },
      201,
    );
    const got = await t.expect('GET', `${file(P, 'hello.txt')}?ref=main`, token, undefined, 200);
    assert.equal(Buffer.from(got.json.content, 'base64').toString(), 'hello again\n');
    assert.equal((await t.expect('GET', file(P, 'hello.txt', '/raw'), token, undefined, 200)).body, 'hello again\n');
    const head = await t.expect('HEAD', `${file(P, 'hello.txt')}?ref=main`, token, undefined, 200);
    assert.equal(head.headers['x-gitlab-file-path'], 'hello.txt');
    // Still only what the token's user may read: a guest's token of the scope is refused as the guest is.
    const { token: guestToken } = await t.ok(
      'POST',
      `/users/${guest.id}/personal_access_tokens`,
      ROOT,
      { name: 'files', scopes: ['read_repository'] },
      201,
    );
    await t.fails('GET', file(P, 'hello.txt', '/raw'), guestToken, undefined, 403, FORBIDDEN);
    const scope = (s: string) => ({
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: s,
    });
    await t.fails('GET', `/projects/${P}/repository/tree`, token, undefined, 403, scope('api read_api'));
    await t.fails('GET', `/projects/${P}`, token, undefined, 403, scope('api read_api'));
    const { token: writer } = await t.ok(
      'POST',
      `/users/${dev.id}/personal_access_tokens`,
      ROOT,
      { name: 'files', scopes: ['read_repository', 'write_repository'] },
      201,
    );
    const write = await t.api('PUT', file(P, 'hello.txt'), writer, {
      branch: 'main',
      content: 'x',
      commit_message: 'm',
    });
    // Named in the refusal as GitLab's files API names it, whatever the method.
    assert.deepEqual([write.statusCode, write.json], [403, scope('api read_api read_repository')]);
  });

  it('GET raw gives the bytes at ref, else at the default branch, with sniffed headers', async () => {
    const text = await t.expect('GET', file(P, 'hello.txt', '/raw'), reporter.token, undefined, 200);
    assert.equal(text.body, 'hello again\n');
    assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(text.headers['content-disposition'], `inline; filename="hello.txt"; filename*=UTF-8''hello.txt`);
    assert.equal(text.headers['x-content-type-options'], 'nosniff');
    // GitLab's headers, as git itself names them.
    assert.deepEqual(
      [text.headers['x-gitlab-blob-id'], text.headers['x-gitlab-commit-id'], text.headers['x-gitlab-last-commit-id']],
      [
        (await git(P, 'rev-parse', 'main:hello.txt')).trim(),
        (await git(P, 'rev-parse', 'main')).trim(),
        (await git(P, 'log', '-1', '--format=%H', 'main', '--', 'hello.txt')).trim(),
      ],
    );
    // All ten of GET's (blob_data), the ref as asked: none when the default branch was read.
    const metaOf = (answer: { headers: Record<string, unknown> }) =>
      Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith('x-gitlab-')));
    const got = await t.expect('GET', `${file(P, 'hello.txt')}?ref=main`, reporter.token, undefined, 200);
    assert.equal(Object.keys(metaOf(got)).length, 10);
    assert.deepEqual(metaOf(text), { ...metaOf(got), 'x-gitlab-ref': '' });
    const atMain = await t.expect('GET', `${file(P, 'hello.txt', '/raw')}?ref=main`, reporter.token, undefined, 200);
    assert.deepEqual(metaOf(atMain), metaOf(got));
    const first = await git(P, 'rev-list', '--max-parents=0', 'main');
    const old = await t.expect('GET', `${file(P, 'hello.txt', '/raw')}?ref=${first}`, reporter.token, undefined, 200);
    assert.equal(old.body, 'hello\n');
    const bin = await t.expect('GET', `${file(P, 'bin/data.bin', '/raw')}?ref=main`, reporter.token, undefined, 200);
    assert.deepEqual(bin.rawPayload, BINARY);
    assert.equal(bin.headers['content-type'], 'application/octet-stream');
    assert.equal(bin.headers['content-disposition'], `attachment; filename="data.bin"; filename*=UTF-8''data.bin`);
    for (const [url, body] of [
      [`${file(P, 'hello.txt', '/raw')}?ref=nowhere`, { message: '404 Commit Not Found' }],
      [file(P, 'nope.txt', '/raw'), NO_FILE],
    ] as const) {
      const res = await t.api('GET', url, reporter.token);
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json, body);
    }
  });

  it('nested paths are written, read and deleted (204, empty body)', async () => {
    const res = await t.api('POST', `/projects/${P}/repository/files/dir%2Fsub%2Ffile.rb`, dev.token, {
      branch: 'main',
      content: 'puts 1\n',
      commit_message: 'nested',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json, { file_path: 'dir/sub/file.rb', branch: 'main' });
    const got = await t.expect(
      'GET',
      `/projects/${P}/repository/files/dir%2Fsub%2Ffile.rb?ref=main`,
      dev.token,
      undefined,
      200,
    );
    assert.deepEqual([got.json.file_name, got.json.file_path, got.json.size], ['file.rb', 'dir/sub/file.rb', 7]);
    assert.equal((await put(P, 'dir/tmp.txt', { content: 'tmp' })).statusCode, 201);
    const del = await t.api('DELETE', `${file(P, 'dir/tmp.txt')}?branch=main&commit_message=remove%20tmp`, dev.token);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await log(P))[0], 'DEV <dev@example.com>|remove tmp');
    assert.deepEqual((await t.api('GET', `${file(P, 'dir/tmp.txt')}?ref=main`, dev.token)).json, NO_FILE);
  });

  it("a node's cache of a repository written and read 60 times holds a bounded number of packs", async () => {
    const id = await project({ path: 'many-writes', initialize_with_readme: true });
    for (let i = 0; i < 60; i++) {
      assert.equal((await put(id, `f${i}.txt`, { content: `${i}\n` }, alice.token)).statusCode, 201);
      await gitDir(id); // brought up to date, as a fetch or a diff page brings it
    }
    const packs = fs.readdirSync(path.join(await gitDir(id), 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
    // A pack for each refresh, for good: 60.
    assert.ok(packs.length <= 51, `${packs.length} packs`);
    assert.equal(await git(id, 'rev-list', '--count', 'main'), '61');
    assert.equal(await git(id, 'fsck', '--strict', '--no-progress'), '');
  });

  it('reads signatures as git does, a header of 100,000 "<" in time that grows with it no faster', async () => {
    const id = await project({ path: 'odd-idents', initialize_with_readme: true, visibility: 'public' });
    const repo = gitSync(await gitDir(id));
    const tree = repo(['rev-parse', 'main^{tree}']);
    const parent = repo(['rev-parse', 'main']);
    // git's split_ident_line: the name ends at the first "<" (spaces before it dropped), the email at the first
    // ">" after it, the date follows the last ">". A later header of the same name is free text to git fsck.
    const body = [
      `tree ${tree}`,
      `parent ${parent}`,
      'author Ann  Other <ann@example.com> 1700000000 +0100',
      'committer Cy <cy@example.com> 1700000100 -0230',
      `x-extra ${'<'.repeat(100_000)}`,
      `committer ${'<'.repeat(100_000)}`,
      '',
      'odd idents',
      '',
    ].join('\n');
    const commit = repo(['hash-object', '-t', 'commit', '-w', '--stdin'], body);
    repo(['update-ref', 'refs/heads/main', commit]);
    await t.importGitDir('project', id);
    const before = process.cpuUsage();
    const raw = await t.api('GET', `${file(id, 'README.md', '/raw')}?ref=main`, null);
    const commits = await t.api('GET', `/projects/${id}/repository/commits?ref_name=main&per_page=1`, null);
    const used = process.cpuUsage(before);
    assert.equal(raw.statusCode, 200);
    assert.equal(commits.statusCode, 200);
    const [c] = commits.json;
    assert.deepEqual(
      [c.id, c.author_name, c.author_email, c.authored_date],
      [commit, 'Ann  Other', 'ann@example.com', '2023-11-14T23:13:20.000+01:00'],
    );
    // Each read parsed the commit, every "<" tried as the name's end: seconds of the event loop each.
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 1000, `the reads took ${ms.toFixed(0)} ms of CPU`);
  });

  it("a write changes only its path's entries: other names keep their bytes, git's order holds, emptied folders go", async () => {
    const id = await project({ path: 'kept-bytes', initialize_with_readme: true });
    const repo = gitSync(await gitDir(id));
    const blob = repo(['hash-object', '-w', '--stdin'], 'x\n');
    const inner = repo(['mktree'], `100644 blob ${blob}\tx\n`);
    // caf\xe9.txt: a name in Latin-1, as a push from an old client may bring; git stores names as bytes.
    const rootList = Buffer.concat([
      Buffer.from(`100644 blob ${blob}\tREADME.md\n100644 blob ${blob}\ta-b\n040000 tree ${inner}\ta\n`),
      Buffer.from(`100644 blob ${blob}\ta0\n100644 blob ${blob}\tcaf`),
      Buffer.from([0xe9]),
      Buffer.from('.txt\n'),
    ]);
    const tree = repo(['mktree'], rootList);
    repo(['update-ref', 'refs/heads/main', repo(['commit-tree', tree, '-p', 'main', '-m', 'pushed'])]);
    await t.importGitDir('project', id);

    for (const [method, p, status] of [
      ['POST', 'a.txt', 201], // between a-b and a/ in git's order
      ['POST', 'a/y', 201],
      ['PUT', 'a0', 200],
      ['POST', 'z/deep/new', 201],
      ['DELETE', 'z/deep/new', 204],
    ] as const) {
      const body = { branch: 'main', commit_message: `${method} ${p}`, ...(method === 'DELETE' ? {} : { content: p }) };
      const res = await t.api(method, file(id, p), alice.token, body);
      assert.equal(res.statusCode, status, `${method} ${p}: ${res.body}`);
    }
    const listed = execFileSync('git', ['--git-dir', await gitDir(id), 'ls-tree', '-r', '-z', '--name-only', 'main']);
    const names = listed.toString('latin1').split('\0').filter(Boolean);
    assert.deepEqual(names, ['README.md', 'a-b', 'a.txt', 'a/x', 'a/y', 'a0', 'caf\xe9.txt']);
    assert.equal(await git(id, 'rev-parse', 'main:a/x'), blob);
    assert.equal(await git(id, 'rev-parse', 'main:a0'), repo(['hash-object', '--stdin'], 'a0'));
  });

  it("a run of writes makes the tree git's own index makes for the same changes; clashes answer as Gitaly", async () => {
    const id = await project({ path: 'same-trees' });
    const oracle = gitSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-tree-oracle-')));
    oracle(['init', '-q']);
    // Names that git's order puts around a directory's '/' (a-b, a.b, a/, a0), and bytes beyond ASCII.
    const pool = ['a', 'a-b', 'a.b', 'a0', 'ab', 'b', 'é.txt', 'sp ace', 'a/b', 'a/b.c', 'a/b/c', 'a.b/x', 'z/y/x/w'];
    const files = new Map<string, string>(); // path → content, as the branch should hold it
    const seen = new Map<string, number>();
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(seed / 65536) % n; // the high bits: a small modulus of the low ones repeats soon
    };
    for (let step = 0; step < 60; step++) {
      const p = pool[next(pool.length)];
      const below = [...files.keys()].some((f) => p.startsWith(`${f}/`));
      const above = [...files.keys()].some((f) => f.startsWith(`${p}/`));
      const action = files.has(p) ? (next(3) ? 'update' : 'delete') : 'create';
      const content = `${p} at ${step}\n`;
      const executable = next(4) === 0;
      const method = { create: 'POST', update: 'PUT', delete: 'DELETE' }[action];
      const body = {
        branch: 'main',
        commit_message: `${action} ${p}`,
        ...(action === 'delete' ? {} : { content, ...(executable ? { execute_filemode: true } : {}) }),
      };
      const res = await t.api(method, file(id, p), alice.token, body);
      const what = below
        ? 'below a file'
        : above
          ? 'a directory'
          : `${action}${executable && action !== 'delete' ? ' +x' : ''}`;
      seen.set(what, (seen.get(what) ?? 0) + 1);
      if (below || above) {
        assert.deepEqual(
          [res.statusCode, res.json],
          [400, { message: `A ${below ? 'file' : 'directory'} with this name already exists` }],
          p,
        );
        continue;
      }
      assert.equal(res.statusCode, { create: 201, update: 200, delete: 204 }[action], `${method} ${p}: ${res.body}`);
      if (action === 'delete') {
        files.delete(p);
        oracle(['update-index', '--force-remove', p]);
      } else {
        files.set(p, content);
        const blob = oracle(['hash-object', '-w', '--stdin'], content);
        const mode = executable
          ? '100755'
          : action === 'update'
            ? oracle(['ls-files', '-s', p]).split(' ')[0]
            : '100644';
        oracle(['update-index', '--add', '--cacheinfo', `${mode},${blob},${p}`]);
      }
      if (step % 10 === 9 || step === 59)
        assert.equal(await git(id, 'rev-parse', 'main^{tree}'), oracle(['write-tree']), `after ${method} ${p}`);
    }
    // The run went through every case.
    assert.deepEqual([...seen.keys()].sort(), [
      'a directory',
      'below a file',
      'create',
      'create +x',
      'delete',
      'update',
      'update +x',
    ]);
  });

  it('start_branch creates a new branch from an existing one; a missing branch without it is refused', async () => {
    const main = await git(P, 'rev-parse', 'main');
    const res = await put(P, 'feat.txt', { branch: 'feat', start_branch: 'main', content: 'feat' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json, { file_path: 'feat.txt', branch: 'feat' });
    assert.equal(await git(P, 'rev-parse', 'feat^'), main);
    assert.equal(await git(P, 'rev-parse', 'main'), main);
    assert.deepEqual((await t.api('GET', `${file(P, 'feat.txt')}?ref=main`, dev.token)).json, NO_FILE);
    assert.equal(
      (await t.ok('GET', `${file(P, 'feat.txt')}?ref=feat`, dev.token, undefined, 200)).last_commit_id,
      await git(P, 'rev-parse', 'feat'),
    );
    for (const body of [{ branch: 'ghost' }, { branch: 'ghost', start_branch: 'also-missing' }]) {
      const refused = await put(P, 'ghost.txt', { ...body, content: 'x' });
      assert.equal(refused.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(refused.json, NOT_ON_BRANCH);
    }
    assert.equal(await git(P, 'for-each-ref', '--format=%(refname:short)'), 'feat\nmain');
  });

  it("a branch can be neither a folder of another nor inside one: 400 with git's message, and nothing written", async () => {
    const id = await project({ path: 'clashes', visibility: 'private', initialize_with_readme: true });
    const ok = await put(id, 'a.txt', { branch: 'feature', start_branch: 'main', content: 'a' }, alice.token);
    assert.equal(ok.statusCode, 201, ok.body);
    const before = await git(id, 'for-each-ref', '--format=%(refname) %(objectname)');
    const inside = await put(id, 'b.txt', { branch: 'feature/b', start_branch: 'main', content: 'b' }, alice.token);
    assert.equal(inside.statusCode, 400);
    assert.deepEqual(inside.json, {
      message:
        "cannot lock ref 'refs/heads/feature/b': 'refs/heads/feature' exists; cannot create 'refs/heads/feature/b'",
    });
    assert.equal(
      (await put(id, 'c.txt', { branch: 'topic/c', start_branch: 'main', content: 'c' }, alice.token)).statusCode,
      201,
    );
    const folder = await put(id, 'd.txt', { branch: 'topic', start_branch: 'main', content: 'd' }, alice.token);
    assert.equal(folder.statusCode, 400);
    assert.deepEqual(folder.json, {
      message: "cannot lock ref 'refs/heads/topic': 'refs/heads/topic/c' exists; cannot create 'refs/heads/topic'",
    });
    // Names that only share a beginning are no clash, whatever their case.
    for (const branch of ['feature-2', 'Feature/x', 'topics'])
      assert.equal(
        (await put(id, 'e.txt', { branch, start_branch: 'main', content: 'e' }, alice.token)).statusCode,
        201,
        branch,
      );
    const after = (await git(id, 'for-each-ref', '--format=%(refname)')).split('\n');
    assert.deepEqual(after, [
      'refs/heads/Feature/x',
      'refs/heads/feature',
      'refs/heads/feature-2',
      'refs/heads/main',
      'refs/heads/topic/c',
      'refs/heads/topics',
    ]);
    assert.ok(before.includes('refs/heads/feature '));
  });

  it('first writes to an empty repository at once, each on its own branch: one makes the default branch, none is a 500', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await project({ path: `racing-${round}`, visibility: 'private' }, alice.token);
      const answers = await Promise.all(
        ['one', 'two', 'three'].map((branch) =>
          t.api('POST', file(id, `${branch}.txt`), alice.token, { branch, content: branch, commit_message: branch }),
        ),
      );
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.equal(statuses.filter((s) => s === 201).length >= 1, true, statuses.join());
      for (const a of answers) assert.ok([201, 400].includes(a.statusCode), `${a.statusCode} ${a.body}`);
      const shown = await t.ok('GET', `/projects/${id}`, alice.token, undefined, 200);
      assert.ok(['one', 'two', 'three'].includes(shown.default_branch), shown.default_branch);
    }
  });

  it("missing required parameters: 400 with Grape's list", async () => {
    const post = await t.api('POST', file(P, 'x.txt'), dev.token, { content: 'x' });
    assert.equal(post.statusCode, 400);
    assert.deepEqual(post.json, { error: 'branch is missing, commit_message is missing' });
    const del = await t.api('DELETE', file(P, 'hello.txt'), dev.token);
    assert.equal(del.statusCode, 400);
    assert.deepEqual(del.json, { error: 'branch is missing, commit_message is missing' });
    const noContent = await t.api('POST', file(P, 'x.txt'), dev.token, { branch: 'main', commit_message: 'm' });
    assert.equal(noContent.statusCode, 400);
    assert.deepEqual(noContent.json, { error: 'content is missing' });
  });

  it('unsafe paths are refused with 400 and nothing is written', async () => {
    const head = await git(P, 'rev-parse', 'main');
    for (const p of [
      '..%2F..%2Fetc%2Fpasswd',
      '%252E%252E%252Fetc%252Fpasswd',
      'dir%2F..%2F..%2Fx',
      '%2Fetc%2Fpasswd',
    ]) {
      const base = `/projects/${P}/repository/files/${p}`;
      for (const [method, url, payload] of [
        ['POST', base, { branch: 'main', content: 'x', commit_message: 'evil' }],
        ['PUT', base, { branch: 'main', content: 'x', commit_message: 'evil' }],
        ['GET', `${base}?ref=main`],
        ['GET', `${base}/raw`],
      ] as const) {
        const res = await t.api(method, url, dev.token, payload);
        assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
        assert.deepEqual(res.json, BAD_PATH, `${method} ${url}`);
      }
    }
    const tree = await t.api('GET', `/projects/${P}/repository/tree?path=..%2F..%2Fetc`, dev.token);
    assert.equal(tree.statusCode, 400);
    assert.deepEqual(tree.json, { error: 'path should be a valid file path' });
    assert.equal(await git(P, 'rev-parse', 'main'), head);
  });

  it('option-injection attempts are refused with 4xx, never 500, and create nothing', async () => {
    const out = path.join(os.tmpdir(), `snippetd-injection-${process.pid}`);
    const refs = await git(P, 'for-each-ref');
    const reads = [
      `${file(P, 'hello.txt')}?ref=--output=${e(out)}`,
      `${file(P, 'hello.txt', '/raw')}?ref=--output=${e(out)}`,
      `/projects/${P}/repository/tree?ref=--output=${e(out)}`,
      `/projects/${P}/repository/commits?ref_name=--output=${e(out)}`,
      `/projects/${P}/repository/tree?path=--output=${e(out)}`,
      `/projects/${P}/repository/commits?path=--output=${e(out)}`,
    ];
    for (const url of reads) {
      const res = await t.api('GET', url, dev.token);
      // An unknown ref_name or path on commits is GitLab's 200 []; anything else must be refused.
      if (url.includes('/commits') && res.statusCode === 200) assert.deepEqual(res.json, [], url);
      else assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode} ${res.body}`);
    }
    for (const body of [
      { branch: '-x' },
      { branch: '--output=x' },
      { branch: 'new', start_branch: '--orphan' },
      { branch: 'new', start_branch: '-x' },
    ]) {
      const res = await put(P, 'inject.txt', { ...body, content: 'x' });
      assert.ok(
        res.statusCode >= 400 && res.statusCode < 500,
        `${JSON.stringify(body)}: ${res.statusCode} ${res.body}`,
      );
    }
    assert.equal(fs.existsSync(out), false);
    assert.equal(await git(P, 'for-each-ref'), refs);
    assert.equal(fs.existsSync(path.join(await gitDir(P), 'refs/heads/-x')), false);
  });

  it('tree: root, path=dir, recursive=true, pagination headers, 404 for an unknown path or ref', async () => {
    const root = await t.expect('GET', `/projects/${P}/repository/tree`, reporter.token, undefined, 200);
    assert.deepEqual(root.json, [
      await entry('bin', 'tree', '040000'),
      await entry('dir', 'tree', '040000'),
      await entry('hello.txt', 'blob', '100755'),
    ]);
    assert.deepEqual(
      [root.headers['x-total'], root.headers['x-total-pages'], root.headers['x-page'], root.headers['x-per-page']],
      ['3', '1', '1', '20'],
    );
    const page = await t.expect(
      'GET',
      `/projects/${P}/repository/tree?per_page=2&page=2`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(page.json, [await entry('hello.txt', 'blob', '100755')]);
    assert.deepEqual(
      [
        page.headers['x-total'],
        page.headers['x-total-pages'],
        page.headers['x-page'],
        page.headers['x-per-page'],
        page.headers['x-prev-page'],
        page.headers['x-next-page'],
      ],
      ['3', '2', '2', '2', '1', ''],
    );
    for (const q of ['path=nothing', 'path=hello.txt', 'ref=nowhere', 'path=dir&ref=nowhere']) {
      const res = await t.api('GET', `/projects/${P}/repository/tree?${q}`, reporter.token);
      assert.equal(res.statusCode, 404, q);
      assert.deepEqual(res.json, NO_TREE, q);
    }
  });

  it("tree: path=dir lists the directory's entries, recursive=true every tree and blob below", async () => {
    const rec = await t.expect(
      'GET',
      `/projects/${P}/repository/tree?recursive=true&ref=feat`,
      reporter.token,
      undefined,
      200,
    );
    const all = rec.json.map((x: any) => `${x.type} ${x.path}`).sort();
    assert.deepEqual(all, [
      'blob bin/data.bin',
      'blob dir/sub/file.rb',
      'blob feat.txt',
      'blob hello.txt',
      'tree bin',
      'tree dir',
      'tree dir/sub',
    ]);
    assert.deepEqual(
      rec.json.find((x: any) => x.path === 'dir/sub/file.rb'),
      await entry('dir/sub/file.rb', 'blob', '100644', 'feat'),
    );
    const dir = await t.expect(
      'GET',
      `/projects/${P}/repository/tree?path=dir&ref=main`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(dir.json, [await entry('dir/sub', 'tree', '040000')]);
    const deep = await t.expect(
      'GET',
      `/projects/${P}/repository/tree?path=dir&recursive=true`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(deep.json, [
      await entry('dir/sub', 'tree', '040000'),
      await entry('dir/sub/file.rb', 'blob', '100644'),
    ]);
  });

  it('tree lists trees before blobs, as GitLab (Tree#sorted_entries)', async () => {
    assert.equal((await put(P, 'a.txt', { branch: 'sorted', start_branch: 'main', content: 'a' })).statusCode, 201);
    const res = await t.expect('GET', `/projects/${P}/repository/tree?ref=sorted`, reporter.token, undefined, 200);
    assert.deepEqual(
      res.json.map((x: any) => x.name),
      ['bin', 'dir', 'a.txt', 'hello.txt'],
    );
  });

  it('last_commit_id: an update of a file changed since that commit is refused, as Files::BaseService', async () => {
    const id = await project({ path: 'locking', visibility: 'private', initialize_with_readme: true });
    const head = async () => git(id, 'rev-parse', 'main');
    assert.equal((await put(id, 'lock.txt', { content: 'one' }, alice.token)).statusCode, 201);
    const first = await head();
    const update = (body: object) =>
      t.api('PUT', file(id, 'lock.txt'), alice.token, { branch: 'main', commit_message: 'edit', ...body });
    assert.equal((await update({ content: 'two', last_commit_id: first })).statusCode, 200);
    const second = await head();
    // The file changed since `first`: refused, and the branch stays.
    const stale = await update({ content: 'three', last_commit_id: first });
    assert.equal(stale.statusCode, 400);
    assert.deepEqual(stale.json, {
      message: 'You are attempting to update a file that has changed since you started editing it.',
    });
    assert.equal(await head(), second);
    // Another file's commit after it: this file's last change is still `second`, so either id is current.
    assert.equal((await put(id, 'other.txt', { content: 'x' }, alice.token)).statusCode, 201);
    assert.equal((await update({ content: 'three', last_commit_id: await head() })).statusCode, 200);
    const third = await head();
    // An id that names no commit is no change, as GitLab finds no last commit for it.
    assert.equal((await update({ content: 'four', last_commit_id: '0'.repeat(40) })).statusCode, 200);
    // A delete's parameters have none (GitLab's simple_file_params): a stale one deletes all the same.
    const removed = await t.api('DELETE', file(id, 'lock.txt'), alice.token, {
      branch: 'main',
      commit_message: 'rm',
      last_commit_id: third,
    });
    assert.equal(removed.statusCode, 204);
    assert.equal(await git(id, 'ls-tree', '--name-only', 'main', 'lock.txt'), '');
  });

  it("tree: a large tree's pages are listed from one walk, each exact, and a change is listed anew", async () => {
    // 400 folders each holding a folder with a file: 1,201 entries with the README. Each page walked all 801
    // trees again (a 49,500-entry tree: 270-450 ms of CPU a page); now the listing is kept for the tree.
    const id = await project({ path: 'wide', visibility: 'private', initialize_with_readme: true });
    const gitOf = gitSync(await gitDir(id));
    // Each level's 400 objects written by one git process (hash-object --stdin-paths, mktree --batch), not
    // one each: 2,400 git processes took about 25 s of the test's 29.
    const blobsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-wide-'));
    const commitWith = (change: (i: number) => string) => {
      const files = Array.from({ length: 400 }, (_, i) => {
        const file = path.join(blobsDir, String(i));
        fs.writeFileSync(file, change(i));
        return file;
      });
      const blobs = gitOf(['hash-object', '-w', '--stdin-paths'], `${files.join('\n')}\n`).split('\n');
      const trees = (entries: string[]) => gitOf(['mktree', '--batch'], `${entries.join('\n\n')}\n`).split('\n');
      const inner = trees(blobs.map((blob) => `100644 blob ${blob}\tf`));
      const folders = trees(inner.map((tree) => `040000 tree ${tree}\ta`)).map(
        (tree, i) => `040000 tree ${tree}\td${i}`,
      );
      const readme = gitOf(['rev-parse', 'main:README.md']);
      const tree = gitOf(['mktree'], `${[...folders, `100644 blob ${readme}\tREADME.md`].join('\n')}\n`);
      gitOf(['update-ref', 'refs/heads/main', gitOf(['commit-tree', tree, '-p', 'main', '-m', 'wide'])]);
    };
    commitWith((i) => `${i}\n`);
    await t.importGitDir('project', id);
    /** git's own listing in GitLab's order: trees, then blobs, each as git lists them. */
    const oracle = async (args: string[]) => {
      const all = (await git(id, 'ls-tree', ...args)).split('\n').map((line) => {
        const [meta, p] = line.split('\t');
        const [mode, type, oid] = meta.split(' ');
        return { id: oid, name: p.split('/').pop(), type, path: p, mode };
      });
      return [...all.filter((x) => x.type === 'tree'), ...all.filter((x) => x.type === 'blob')];
    };
    const lookups = async () => {
      const res = await t.request({ method: 'GET', url: '/-/metrics', token: null });
      return res.body
        .split('\n')
        .filter((l) => l.startsWith('snippetd_cache_requests_total{cache="git_object"'))
        .reduce((sum, l) => sum + Number(l.split(' ')[1]), 0);
    };
    const pageOf = async (query: string) => {
      const res = await t.expect('GET', `/projects/${id}/repository/tree?${query}`, alice.token, undefined, 200);
      return { json: res.json, total: res.headers['x-total'] };
    };
    const everything = await oracle(['-r', '-t', 'main']);
    assert.equal(everything.length, 1201);
    assert.deepEqual(await pageOf('recursive=true&per_page=100'), { json: everything.slice(0, 100), total: '1201' });
    const before = await lookups();
    assert.deepEqual(await pageOf('recursive=true&per_page=100&page=9'), {
      json: everything.slice(800, 900),
      total: '1201',
    });
    // The ref and the path's trees are looked up again, not the 801 trees below.
    const again = (await lookups()) - before;
    assert.ok(again < 20, `${again} object lookups for the second page`);
    // Another path, or not recursive, of the same tree is a listing of its own.
    assert.deepEqual(await pageOf('path=d7&recursive=true'), {
      json: (await oracle(['-r', '-t', 'main', 'd7/'])).filter((x) => x.path !== 'd7'),
      total: '2',
    });
    assert.deepEqual(await pageOf('per_page=100&page=5'), {
      json: everything.filter((x) => !x.path.includes('/')).slice(400),
      total: '401',
    });
    // A new commit's tree is listed anew: the files' new ids.
    commitWith((i) => `${i} changed\n`);
    fs.rmSync(blobsDir, { recursive: true, force: true });
    await t.importGitDir('project', id);
    const changed = await oracle(['-r', '-t', 'main']);
    assert.notDeepEqual(changed, everything);
    assert.deepEqual(await pageOf('recursive=true&per_page=100&page=9'), {
      json: changed.slice(800, 900),
      total: '1201',
    });
  });

  it('commits: newest first with every field, ref_name, per_page pagination without totals, as GitLab', async () => {
    const ids = (await git(P, 'rev-list', 'main')).split('\n');
    const res = await t.expect('GET', `/projects/${P}/repository/commits`, reporter.token, undefined, 200);
    assert.deepEqual(
      res.json.map((c: any) => c.id),
      ids,
    );
    assert.equal(res.headers['x-total'], undefined);
    const bin = res.json.find((c: any) => c.title === 'add binary');
    const binId = await git(P, 'log', '-1', '--format=%H', 'main', '--', 'bin/data.bin');
    assert.deepEqual(
      {
        id: bin.id,
        short_id: bin.short_id,
        title: bin.title,
        message: bin.message,
        author_name: bin.author_name,
        author_email: bin.author_email,
        parent_ids: bin.parent_ids,
      },
      {
        id: binId,
        short_id: binId.slice(0, 8),
        title: 'add binary',
        message: 'add binary\n\nwith a body',
        author_name: 'Ann Other',
        author_email: 'ann@example.org',
        parent_ids: [await git(P, 'rev-parse', `${binId}^`)],
      },
    );
    assert.deepEqual(res.json.at(-1).parent_ids, []);
    const feat = await t.expect(
      'GET',
      `/projects/${P}/repository/commits?ref_name=feat`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(
      [feat.json[0].id, feat.json[0].title, feat.json.length],
      [await git(P, 'rev-parse', 'feat'), 'add feat.txt', ids.length + 1],
    );
    const p2 = await t.expect(
      'GET',
      `/projects/${P}/repository/commits?per_page=2&page=2`,
      reporter.token,
      undefined,
      200,
    );
    assert.deepEqual(
      p2.json.map((c: any) => c.id),
      ids.slice(2, 4),
    );
    assert.deepEqual(
      [
        p2.headers['x-total'],
        p2.headers['x-total-pages'],
        p2.headers['x-per-page'],
        p2.headers['x-page'],
        p2.headers['x-next-page'],
      ],
      [undefined, undefined, '2', '2', ids.length > 4 ? '3' : ''],
    );
    for (const c of res.json) {
      assert.ok(Math.abs(Date.parse(c.created_at) - Date.now()) < 120_000, c.created_at);
      assert.match(c.created_at, TIME, c.created_at);
    }
  });

  it('commits: since, until and author filter as git log does, pages with them', async () => {
    const id = await project({ path: 'dated', visibility: 'private', initialize_with_readme: true });
    const gitOf = gitSync(await gitDir(id));
    // A history of its own, in place of the README's commit (made now).
    let parent = '';
    const tree = gitOf(['rev-parse', 'main^{tree}']);
    const made: Record<string, string> = {};
    for (const [name, who, at] of [
      ['2020', 'Ann Other <ann@example.org>', 1_577_836_800], // 2020-01-01
      ['2021', 'Bob Bee <bob@example.net>', 1_609_459_200], // 2021-01-01
      ['2022', 'Ann Other <ann@example.org>', 1_640_995_200], // 2022-01-01
    ] as const) {
      const parentLine = parent ? `parent ${parent}\n` : '';
      const body = `tree ${tree}\n${parentLine}author ${who} ${at} +0200\ncommitter ${who} ${at} +0200\n\n${name}\n`;
      parent = gitOf(['hash-object', '-t', 'commit', '-w', '--stdin'], body);
      made[name] = parent;
    }
    gitOf(['update-ref', 'refs/heads/main', parent]);
    await t.importGitDir('project', id);
    const listed = async (query: string) => {
      const res = await t.expect('GET', `/projects/${id}/repository/commits?${query}`, alice.token, undefined, 200);
      return { ids: res.json.map((c: { id: string }) => c.id), next: res.headers['x-next-page'] };
    };
    assert.deepEqual(await listed(''), { ids: [made['2022'], made['2021'], made['2020']], next: '' });
    assert.deepEqual(await listed('since=2020-06-01T00:00:00Z'), { ids: [made['2022'], made['2021']], next: '' });
    assert.deepEqual(await listed('until=2021-06-01'), { ids: [made['2021'], made['2020']], next: '' });
    // 2021-01-01T00:00:00Z exactly is within both bounds; +02:00 is read as the same moment.
    assert.deepEqual(await listed('since=2021-01-01T02:00:00%2B02:00&until=2021-01-01T00:00:00Z'), {
      ids: [made['2021']],
      next: '',
    });
    assert.deepEqual(await listed('author=Ann'), { ids: [made['2022'], made['2020']], next: '' });
    assert.deepEqual(await listed('author=bob@example.net'), { ids: [made['2021']], next: '' });
    assert.deepEqual(await listed('author=Ann&since=2021-01-01&per_page=1'), { ids: [made['2022']], next: '' });
    // The next page is told by the filtered history too: Ann's 2020 follows.
    assert.deepEqual(await listed('author=Ann&per_page=1'), { ids: [made['2022']], next: '2' });
    await t.fails('GET', `/projects/${id}/repository/commits?since=yesterday`, alice.token, undefined, 400, {
      error: 'since is invalid',
    });
  });

  it('commits: order=topo lists them as git log --topo-order does, with the same filters', async () => {
    const id = await project({ path: 'topo', visibility: 'private', initialize_with_readme: true });
    const gitOf = gitSync(await gitDir(id));
    const tree = gitOf(['mktree'], '');
    let at = 1_600_000_000;
    const commit = (parents: string[], message: string, who = 'Ann Other <ann@example.org>') => {
      at += 100;
      const lines = parents.map((p) => `parent ${p}\n`).join('');
      return gitOf(
        ['hash-object', '-t', 'commit', '-w', '--stdin'],
        `tree ${tree}\n${lines}author ${who} ${at} +0000\ncommitter ${who} ${at} +0000\n\n${message}\n`,
      );
    };
    // Two lines whose commits' times alternate: date order mixes them, topological order does not.
    const base = commit([], 'base');
    const s1 = commit([base], 'side one');
    const m1 = commit([base], 'main one', 'Bo Dee <bo@example.org>');
    const s2 = commit([s1], 'side two');
    const m2 = commit([m1], 'main two', 'Bo Dee <bo@example.org>');
    const merge = commit([m2, s2], 'merge');
    gitOf(['update-ref', 'refs/heads/main', merge]);
    gitOf(['update-ref', 'refs/heads/side', s2]);
    await t.importGitDir('project', id);
    const listed = async (query: string) =>
      (await t.expect('GET', `/projects/${id}/repository/commits?${query}`, alice.token, undefined, 200)).json.map(
        (c: { id: string }) => c.id,
      );
    const gitLog = (...args: string[]) => gitOf(['log', '--format=%H', ...args]).split('\n');
    const topo = gitLog('--topo-order', 'main');
    assert.notDeepEqual(topo, gitLog('main'));
    assert.deepEqual(await listed('order=topo'), topo);
    assert.deepEqual(await listed('order=default'), gitLog('main'));
    assert.deepEqual(await listed('order=topo&per_page=2&page=2'), topo.slice(2, 4));
    assert.deepEqual(await listed('order=topo&author=Bo%20Dee'), [m2, m1]);
    const since = new Date((at - 250) * 1000).toISOString();
    assert.deepEqual(await listed(`order=topo&since=${since}`), gitLog('--topo-order', `--since=${since}`, 'main'));
    assert.deepEqual(await listed('order=topo&first_parent=true'), gitLog('--topo-order', '--first-parent', 'main'));
    assert.deepEqual(await listed('order=topo&all=true'), gitLog('--topo-order', '--all'));
    assert.deepEqual(
      (await t.ok('GET', `/projects/${id}/repository/commits?order=topo`, alice.token, undefined, 200))[0].id,
      merge,
    );
    await t.fails('GET', `/projects/${id}/repository/commits?order=date`, alice.token, undefined, 400, {
      error: 'order does not have a valid value',
    });
  });

  it('commits: first_parent and all take the history git log --first-parent and --all take', async () => {
    const id = await project({ path: 'merged', visibility: 'private', initialize_with_readme: true });
    const gitOf = gitSync(await gitDir(id));
    const treeWith = (x: string) => {
      const blob = gitOf(['hash-object', '-w', '--stdin'], x);
      return gitOf(['mktree'], `100644 blob ${blob}\tx.txt\n`);
    };
    let at = 1_600_000_000;
    const commit = (tree: string, parents: string[], message: string) => {
      at += 100;
      const lines = parents.map((p) => `parent ${p}\n`).join('');
      const who = `Ann Other <ann@example.org> ${at} +0000`;
      return gitOf(
        ['hash-object', '-t', 'commit', '-w', '--stdin'],
        `tree ${tree}\n${lines}author ${who}\ncommitter ${who}\n\n${message}\n`,
      );
    };
    const base = commit(treeWith('0'), [], 'base');
    const m1 = commit(treeWith('0'), [base], 'main one');
    const s1 = commit(treeWith('0'), [base], 'side one');
    const o1 = commit(treeWith('other'), [base], 'other one');
    const s2 = commit(treeWith('side'), [s1], 'side two');
    const merge = commit(treeWith('side'), [m1, s2], 'merge side');
    gitOf(['update-ref', 'refs/heads/main', merge]);
    gitOf(['update-ref', 'refs/heads/other', o1]);
    gitOf(['update-ref', 'refs/tags/v1', s1]);
    await t.importGitDir('project', id);
    const listed = async (query: string) =>
      (
        await t.expect('GET', `/projects/${id}/repository/commits?per_page=100&${query}`, alice.token, undefined, 200)
      ).json.map((c: { id: string }) => c.id);
    const gitLog = (...args: string[]) => gitOf(['log', '--format=%H', ...args]).split('\n');
    assert.deepEqual(await listed(''), gitLog('main'));
    assert.deepEqual(await listed('first_parent=true'), gitLog('--first-parent', 'main'));
    assert.deepEqual(await listed('first_parent=true'), [merge, m1, base]);
    assert.deepEqual(await listed('all=true'), gitLog('--all'));
    assert.ok((await listed('all=true')).includes(o1));
    // --all takes every ref whatever ref_name says.
    assert.deepEqual(await listed('all=true&ref_name=other'), gitLog('--all'));
    assert.deepEqual(await listed('path=x.txt'), gitLog('main', '--', 'x.txt'));
    assert.deepEqual(await listed('first_parent=true&path=x.txt'), gitLog('--first-parent', 'main', '--', 'x.txt'));
    // The merge brought x.txt's change along its second parent, which --first-parent does not walk.
    assert.deepEqual(await listed('first_parent=true&path=x.txt'), [merge, base]);
    assert.deepEqual(await listed('path=x.txt'), [s2, base]);
    // git's ancestry suffixes name commits wherever a ref is taken, as git rev-parse reads them.
    for (const rev of ['main^2', 'main^2~1', 'main~1', 'main^', 'main~0', 'main^0', 'main~2', 'v1~1', 'other^1'])
      assert.equal(
        (
          await t.expect(
            'GET',
            `/projects/${id}/repository/commits/${encodeURIComponent(rev)}`,
            alice.token,
            undefined,
            200,
          )
        ).json.id,
        gitOf(['rev-parse', rev]),
        rev,
      );
    for (const rev of ['main~3', 'main^3', 'main~99999999', 'm~1', 'main~1x'])
      await t.expect(
        'GET',
        `/projects/${id}/repository/commits/${encodeURIComponent(rev)}`,
        alice.token,
        undefined,
        404,
      );
    const file = await t.expect(
      'GET',
      `/projects/${id}/repository/files/x.txt/raw?ref=${encodeURIComponent('main^2~1')}`,
      alice.token,
      undefined,
      200,
    );
    assert.equal(file.body, '0');
  });

  it('initialize_with_readme=true gives a README.md on the default branch', async () => {
    const id = await project({ name: 'Readme Proj', path: 'readme', initialize_with_readme: true, description: 'hi' });
    const got = await t.expect('GET', `${file(id, 'README.md')}?ref=main`, alice.token, undefined, 200);
    assert.equal(Buffer.from(got.json.content, 'base64').toString(), '# Readme Proj\n\nhi\n');
    assert.equal(got.json.commit_id, await git(id, 'rev-parse', 'main'));
    assert.deepEqual(await log(id), ['ALICE <alice@example.com>|Initial commit']);
    assert.equal((await t.ok('GET', `/projects/${id}`, alice.token, undefined, 200)).default_branch, 'main');
  });

  it('permissions: public readable anonymously; private by reporter+; writes developer+; never archived', async () => {
    const pub = await project({ path: 'pub', visibility: 'public', initialize_with_readme: true });
    for (const url of [
      `${file(pub, 'README.md')}?ref=main`,
      file(pub, 'README.md', '/raw'),
      `/projects/${pub}/repository/tree`,
      `/projects/${pub}/repository/commits`,
    ]) {
      await t.expect('GET', url, null, undefined, 200);
      await t.expect('GET', url, stranger.token, undefined, 200);
    }
    const body = { branch: 'main', content: 'x', commit_message: 'm' };
    const anon = await t.api('POST', file(pub, 'anon.txt'), null, body);
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json, { message: '401 Unauthorized' });
    const outsider = await t.api('POST', file(pub, 'outsider.txt'), stranger.token, body);
    assert.equal(outsider.statusCode, 403);
    assert.deepEqual(outsider.json, FORBIDDEN);

    const reads = [
      `${file(P, 'hello.txt')}?ref=main`,
      file(P, 'hello.txt', '/raw'),
      `/projects/${P}/repository/tree`,
      `/projects/${P}/repository/commits`,
    ];
    for (const url of reads) {
      const g = await t.api('GET', url, guest.token);
      assert.equal(g.statusCode, 403, `guest ${url}`);
      assert.deepEqual(g.json, FORBIDDEN);
      await t.expect('GET', url, reporter.token, undefined, 200);
      for (const token of [stranger.token, null]) {
        const res = await t.api('GET', url, token);
        assert.equal(res.statusCode, 404, `${token ? 'stranger' : 'anonymous'} ${url}`);
        assert.deepEqual(res.json, NO_PROJECT);
      }
    }
    for (const [token, status, expected] of [
      [guest.token, 403, FORBIDDEN],
      [reporter.token, 403, FORBIDDEN],
      [stranger.token, 404, NO_PROJECT],
      [null, 401, { message: '401 Unauthorized' }],
    ] as const) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const res = await t.api(method, file(P, method === 'POST' ? 'denied.txt' : 'hello.txt'), token, body);
        assert.equal(res.statusCode, status, `${method} ${res.body}`);
        assert.deepEqual(res.json, expected);
      }
    }
    assert.equal((await put(P, 'by-dev.txt', { content: 'ok' })).statusCode, 201);
    assert.equal((await log(P))[0], 'DEV <dev@example.com>|add by-dev.txt');

    const arch = await project({ path: 'archived', initialize_with_readme: true });
    await t.expect('POST', `/projects/${arch}/archive`, alice.token, undefined, 201);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await t.api(method, file(arch, method === 'POST' ? 'new.txt' : 'README.md'), alice.token, body);
      assert.equal(res.statusCode, 403, `${method} ${res.body}`);
      assert.deepEqual(res.json, FORBIDDEN);
    }
    await t.expect('GET', `${file(arch, 'README.md')}?ref=main`, alice.token, undefined, 200);
    assert.equal(await git(arch, 'rev-list', '--count', 'main'), '1');
  });

  it("an internal project's code: signed-in users, but an external one only as a reporter or above (GitLab's internal_access)", async () => {
    const id = await project({ path: 'inside', visibility: 'internal', initialize_with_readme: true });
    const externalGuest = await t.user('external-guest', { external: true });
    const externalReporter = await t.user('external-reporter', { external: true });
    for (const [u, level] of [
      [externalGuest, 10],
      [externalReporter, 20],
    ] as const)
      await t.expect('POST', `/projects/${id}/members`, alice.token, { user_id: u.id, access_level: level }, 201);
    const reads = [
      `${file(id, 'README.md')}?ref=main`,
      file(id, 'README.md', '/raw'),
      `/projects/${id}/repository/tree`,
      `/projects/${id}/repository/commits`,
      `/projects/${id}/repository/branches`,
      `/projects/${id}/repository/tags`,
      `/projects/${id}/repository/commits/main/diff`,
    ];
    for (const url of reads) {
      // A guest's role gives no code; an internal project gives it to signed-in users who are not external.
      await t.fails('GET', url, externalGuest.token, undefined, 403, FORBIDDEN);
      await t.expect('GET', url, externalReporter.token, undefined, 200);
      await t.expect('GET', url, stranger.token, undefined, 200);
      await t.expect('GET', url, guest.token, undefined, 200);
    }
    // The project itself stays the external guest's to see, as GitLab's guest_access gives it.
    await t.ok('GET', `/projects/${id}`, externalGuest.token, undefined, 200);
    const clone = await t.request({
      method: 'GET',
      url: `/alice/inside.git/info/refs?service=git-upload-pack`,
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`x:${externalGuest.token}`).toString('base64')}` },
    });
    // GitLab's GitAccess: the project is theirs to see, its code not: download_code's sentence, 403.
    assert.equal(clone.statusCode, 403, clone.body);
    assert.equal(clone.body, 'You are not allowed to download code from this project.\n');
    // A push asks push_code instead, with its own sentence.
    const push = await t.request({
      method: 'GET',
      url: `/alice/inside.git/info/refs?service=git-receive-pack`,
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`x:${externalGuest.token}`).toString('base64')}` },
    });
    assert.equal(push.statusCode, 403, push.body);
    assert.equal(push.body, 'You are not allowed to push code to this project.\n');
  });

  it('answers reads sent together with the project delete: 200, 404 or cut off, never a 500', async () => {
    // A read finds the project, then its repository, commits and blobs in later statements; the delete may
    // commit in between. Reads start a few turns of the event loop apart, so that some land in that gap.
    const large = crypto.randomBytes(1536 * 1024).toString('base64');
    const statuses = new Map<number, number>();
    for (let round = 0; round < 8; round++) {
      const { id, path_with_namespace: where } = await t.ok(
        'POST',
        '/projects',
        alice.token,
        { path: `going-${round}`, visibility: 'public' },
        201,
      );
      assert.equal((await put(id, 'small.txt', { content: 'one\n' }, alice.token)).statusCode, 201);
      const first = (await t.ok('GET', `/projects/${id}/repository/commits`, alice.token, undefined, 200))[0].id;
      const update = { branch: 'main', commit_message: 'two', content: 'two\n' };
      await t.expect('PUT', file(id, 'small.txt'), alice.token, update, 200);
      assert.equal((await put(id, 'large.txt', { content: large }, alice.token)).statusCode, 201);
      const api = `/api/v4/projects/${id}`;
      const reads: [string, string | null][] = [
        [`${api}/repository/files/small.txt/raw?ref=${first}`, 'one\n'],
        [`${api}/repository/files/small.txt/raw`, 'two\n'],
        [`${api}/repository/files/large.txt/raw`, large],
        [`${api}/repository/files/large.txt?ref=main`, null],
        [`${api}/repository/tree`, null],
        [`${api}/repository/archive.tar`, null],
        [`${api}/repository/compare?from=${first}&to=main`, null],
        [`${api}/repository/commits?path=small.txt`, null],
        [`/${where}`, null],
        [`/${where}/-/blob/main/small.txt`, null],
        [`/${where}/-/raw/main/large.txt`, large],
      ];
      const answers = reads.flatMap(([url, whole]) =>
        [0, 1, 2, 4, 8, 12].map((n) =>
          turns(n + (round % 4))
            .then(() => t.request({ method: 'GET', url, token: null }))
            // A raw read whose parts go while it sends them is cut off: its status was sent already.
            .catch((error: Error) => ({ statusCode: 0, body: error.message }))
            .then((answer) => ({ ...answer, url, whole })),
        ),
      );
      // The delete a few turns after the first reads: some of them come before it on either database.
      const deleting = turns(2 + (round % 3)).then(() => t.api('DELETE', `/projects/${id}`, alice.token));
      const [deleted, ...got] = await Promise.all([deleting, ...answers]);
      assert.equal(deleted.statusCode, 202);
      for (const a of got) {
        // 302: the page of a project gone sends an anonymous visitor to sign in, as GitLab does. 0: a raw read
        // cut off, its status sent already.
        const expected = a.url.includes('raw') ? [0, 200, 302, 404] : [200, 302, 404];
        assert.ok(expected.includes(a.statusCode), `${a.url}: ${a.statusCode} ${a.body.slice(0, 300)}`);
        if (a.statusCode === 200 && a.whole !== null) assert.equal(a.body, a.whole, a.url);
        statuses.set(a.statusCode, (statuses.get(a.statusCode) ?? 0) + 1);
      }
    }
    // Reads before the delete and after it, both: the race was run, not missed.
    assert.ok(statuses.get(200)! > 0 && statuses.get(404)! > 0, JSON.stringify([...statuses]));
  });

  it('a damaged tree in the rows (one no push or write can make) answers 500, quickly, and the server goes on', async () => {
    const id = await project({ path: 'damaged', visibility: 'private', initialize_with_readme: true });
    touched.delete(id); // its damage is the point: fsck is for the others
    // Stored straight into the rows: git itself will not carry such a tree anywhere.
    const blob = { type: 'blob' as const, body: Buffer.from('x') };
    const blobId = objectId(blob.type, blob.body);
    // The entry 'a\0b' as a write once made it: its name ends at the first NUL, the rest reads as an id and more.
    const tree = {
      type: 'tree' as const,
      body: Buffer.concat([Buffer.from('100644 a\0b\0'), Buffer.from(blobId, 'hex')]),
    };
    const treeId = objectId(tree.type, tree.body);
    const who = 'A <a@example.com> 0 +0000';
    const commit = {
      type: 'commit' as const,
      body: Buffer.from(`tree ${treeId}\nauthor ${who}\ncommitter ${who}\n\nx\n`),
    };
    const commitId = objectId(commit.type, commit.body);
    const repo = (await t.app.store.git.find('project', id))!;
    await t.app.store.transaction(async (tx) => {
      const bound = repo.on(tx.kysely);
      await bound.store([
        { id: blobId, ...blob },
        { id: treeId, ...tree },
        { id: commitId, ...commit },
      ]);
      await bound.moveRef('refs/heads/damaged', null, commitId);
    });
    for (const url of [
      `${file(id, 'a')}/raw?ref=damaged`,
      `${file(id, 'c/d')}?ref=damaged`,
      `/projects/${id}/repository/tree?ref=damaged`,
    ]) {
      const started = performance.now();
      const res = await t.api('GET', url, alice.token);
      assert.deepEqual([res.statusCode, res.json], [500, { message: '500 Internal Server Error' }], url);
      assert.ok(performance.now() - started < 5000, url);
    }
    await t.expect('GET', `${file(id, 'README.md')}/raw`, alice.token, undefined, 200);
    // fsck names it rather than stop at it.
    const { problems } = await fsck(t.app.store, false);
    assert.deepEqual(
      problems.filter((p) => p.includes(treeId)),
      [`project ${id}: tree ${treeId}: an entry without its name or id (a damaged tree)`],
    );
  });

  it('every touched repository passes git fsck --strict', async () => {
    assert.ok(touched.size >= 6);
    for (const id of touched) {
      const r = spawnSync('git', ['--git-dir', await gitDir(id), 'fsck', '--strict', '--no-progress'], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `project ${id}: ${r.stdout}${r.stderr}`);
    }
  });
});

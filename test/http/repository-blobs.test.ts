// GET /projects/:id/repository/blobs/:sha and …/raw (GitLab's lib/api/repositories.rb: assign_blob_vars!, the blob
// answer, send_git_blob with no_cache_headers): a blob by the id the tree lists. git cat-file, on the repository the
// rows hold, is the oracle of the bytes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { createTestApp, type TestApp } from '../helper.ts';

const NO_BLOB = { message: '404 Blob Not Found' };
const BINARY = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7 + 3) % 256));

describe('repository blobs API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, reporter: U, guest: U, stranger: U;
  let P: number;
  const blobs = (id: number, sha: string, rest = '') => `/projects/${id}/repository/blobs/${sha}${rest}`;
  const git = async (id: number, ...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', id))!, ...args], { maxBuffer: 1 << 26 });
  const put = (id: number, path: string, content: string, encoding = 'text') =>
    t.ok(
      'POST',
      `/projects/${id}/repository/files/${encodeURIComponent(path)}`,
      alice.token,
      { branch: 'main', commit_message: `add ${path}`, content, encoding },
      201,
    );

  before(async () => {
    t = await createTestApp();
    [alice, reporter, guest, stranger] = [
      await t.user('alice'),
      await t.user('reporter'),
      await t.user('guest'),
      await t.user('stranger'),
    ];
    P = (await t.ok('POST', '/projects', alice.token, { path: 'repo', visibility: 'private' }, 201)).id;
    for (const [u, level] of [
      [reporter, 20],
      [guest, 10],
    ] as const)
      await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: u.id, access_level: level }, 201);
    await put(P, 'hello.txt', 'hello\n');
    await put(P, 'bin/data.bin', BINARY.toString('base64'), 'base64');
    // Past a mebibyte a blob is read as a large one (streamed for raw).
    await put(P, 'deep/er/large.txt', crypto.randomBytes(900 * 1024).toString('hex'));
  });
  after(() => t.close());

  it('answers every blob the tree lists: its size, its bytes in base64 and its id, in GitLab order', async () => {
    const tree = await t.ok('GET', `/projects/${P}/repository/tree?recursive=true`, reporter.token, undefined, 200);
    const files = tree.filter((e: { type: string }) => e.type === 'blob');
    assert.equal(files.length, 3);
    for (const { id, path } of files) {
      const bytes = await git(P, 'cat-file', 'blob', id);
      const res = await t.expect('GET', blobs(P, id), reporter.token, undefined, 200);
      assert.equal(res.headers['content-type'], 'application/json', path);
      assert.equal(
        res.body,
        JSON.stringify({ size: bytes.length, encoding: 'base64', content: bytes.toString('base64'), sha: id }),
      );
    }
  });

  it('raw sends the bytes, typed as a raw file is, with no name and not to be kept', async () => {
    const id = (path: string) => git(P, 'rev-parse', `main:${path}`).then((b) => b.toString().trim());
    const cases = [
      ['hello.txt', 'text/plain; charset=utf-8', 'inline'],
      ['bin/data.bin', 'application/octet-stream', 'attachment'],
      ['deep/er/large.txt', 'text/plain; charset=utf-8', 'inline'],
    ] as const;
    for (const [path, type, disposition] of cases) {
      const sha = await id(path);
      const res = await t.expect('GET', blobs(P, sha, '/raw'), reporter.token, undefined, 200);
      assert.deepEqual(res.rawPayload, await git(P, 'cat-file', 'blob', sha), path);
      assert.deepEqual(
        [
          res.headers['content-type'],
          res.headers['content-disposition'],
          res.headers['content-security-policy'],
          res.headers['cache-control'],
          res.headers.pragma,
          res.headers.expires,
          res.headers['x-content-type-options'],
        ],
        [
          type,
          disposition,
          "default-src 'none'; sandbox",
          'no-store',
          'no-cache',
          'Fri, 01 Jan 1990 00:00:00 GMT',
          'nosniff',
        ],
        path,
      );
    }
  });

  it('takes the id in capitals; anything but a blob id of this repository is 404 Blob Not Found', async () => {
    const sha = (await git(P, 'rev-parse', 'main:hello.txt')).toString().trim();
    const upper = await t.ok('GET', blobs(P, sha.toUpperCase()), reporter.token, undefined, 200);
    assert.equal(upper.sha, sha);
    const other = (await t.ok('POST', '/projects', alice.token, { path: 'other' }, 201)).id;
    await put(other, 'only-here.txt', 'elsewhere\n');
    const elsewhere = (await git(other, 'rev-parse', 'main:only-here.txt')).toString().trim();
    const commit = (await git(P, 'rev-parse', 'main')).toString().trim();
    const tree = (await git(P, 'rev-parse', 'main^{tree}')).toString().trim();
    for (const wrong of [
      sha.slice(0, 7),
      sha.slice(0, 39),
      `${sha}0`,
      commit,
      tree,
      elsewhere,
      'main',
      'main:hello.txt',
      'x'.repeat(40),
    ]) {
      await t.fails('GET', blobs(P, encodeURIComponent(wrong)), reporter.token, undefined, 404, NO_BLOB);
      await t.fails('GET', blobs(P, encodeURIComponent(wrong), '/raw'), reporter.token, undefined, 404, NO_BLOB);
    }
  });

  it("needs the project's code: 403 for a guest of a private project, 404 for a stranger, 200 for anyone on a public one", async () => {
    const sha = (await git(P, 'rev-parse', 'main:hello.txt')).toString().trim();
    for (const rest of ['', '/raw']) {
      await t.fails('GET', blobs(P, sha, rest), guest.token, undefined, 403, { message: '403 Forbidden' });
      await t.fails('GET', blobs(P, sha, rest), stranger.token, undefined, 404, { message: '404 Project Not Found' });
      await t.fails('GET', blobs(P, sha, rest), null, undefined, 404, { message: '404 Project Not Found' });
    }
    const pub = (await t.ok('POST', '/projects', alice.token, { path: 'open', visibility: 'public' }, 201)).id;
    await put(pub, 'README.md', '# open\n');
    const readme = (await git(pub, 'rev-parse', 'main:README.md')).toString().trim();
    assert.equal(
      (await t.ok('GET', blobs(pub, readme), null, undefined, 200)).content,
      Buffer.from('# open\n').toString('base64'),
    );
    assert.equal((await t.expect('GET', blobs(pub, readme, '/raw'), null, undefined, 200)).body, '# open\n');
  });
});

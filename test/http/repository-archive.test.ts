// GET /projects/:id/repository/archive[.format] (GitLab's lib/api/repositories.rb: send_git_archive with append_sha,
// archive_metadata's name and formats, Workhorse's archive headers, the project_repositories_archive limit). tar and
// unzip read what came back; git ls-tree on the repository the rows hold says what must be in it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { createTestApp, sleep, type TestApp } from '../helper.ts';

const NO_FILE = { message: '404 File Not Found' };
const BINARY = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7 + 3) % 256));

describe('repository archive API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, guest: U, stranger: U;
  let P: number;
  const archive = (rest = '', id = P) => `/projects/${id}/repository/archive${rest}`;
  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' }).trim();
  /** The names in an archive, as tar or unzip lists them. */
  const listing = (bytes: Buffer, format: 'tgz' | 'tbz' | 'tar' | 'zip') =>
    (format === 'zip'
      ? execFileSync(
          'python3',
          [
            '-c',
            'import sys,zipfile,io; print("\\n".join(zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())).namelist()))',
          ],
          { input: bytes, encoding: 'utf8' },
        )
      : execFileSync('tar', [{ tgz: '-tzf', tbz: '-tjf', tar: '-tf' }[format], '-'], { input: bytes, encoding: 'utf8' })
    )
      .split('\n')
      .filter(Boolean)
      .sort();
  /** What an archive of `ref` (below `path`) holds under `prefix`: its folders and files. */
  const expected = async (ref: string, prefix: string, path?: string) => {
    const entries = (await git('ls-tree', '-r', '-t', '--name-only', ref, ...(path ? ['--', path] : []))).split('\n');
    const inside = path ? entries.filter((e) => e === path || e.startsWith(`${path}/`)) : entries;
    const dirs = new Set((await git('ls-tree', '-r', '-d', '--name-only', ref)).split('\n'));
    return [`${prefix}/`, ...inside.map((e) => `${prefix}/${e}${dirs.has(e) ? '/' : ''}`)].sort();
  };
  const write = (branch: string, path: string, content: string, encoding = 'text') =>
    t.ok(
      'POST',
      `/projects/${P}/repository/commits`,
      alice.token,
      { branch, commit_message: `add ${path}`, actions: [{ action: 'create', file_path: path, content, encoding }] },
      201,
    );

  before(async () => {
    t = await createTestApp();
    [alice, guest, stranger] = [await t.user('alice'), await t.user('guest'), await t.user('stranger')];
    P = (await t.ok('POST', '/projects', alice.token, { path: 'repo', visibility: 'private' }, 201)).id;
    await t.ok('POST', `/projects/${P}/members`, alice.token, { user_id: guest.id, access_level: 10 }, 201);
    await write('main', 'hello.txt', 'hello\n');
    await write('main', 'docs/guide/intro.md', '# Intro\n');
    await write('main', 'bin/data.bin', BINARY.toString('base64'), 'base64');
    await t.ok('POST', `/projects/${P}/repository/branches`, alice.token, { branch: 'feature/x', ref: 'main' }, 201);
    await write('feature/x', 'docs/new.md', 'new\n');
  });
  after(() => t.close());

  it('sends the default branch as tar.gz, named <project>-<ref>-<commit>, with Workhorse headers', async () => {
    const sha = await git('rev-parse', 'main');
    const res = await t.expect('GET', archive(), alice.token, undefined, 200);
    const name = `repo-main-${sha}`;
    assert.deepEqual(
      [
        res.headers['content-type'],
        res.headers['content-disposition'],
        res.headers['content-transfer-encoding'],
        res.headers['cache-control'],
      ],
      [
        'application/octet-stream',
        `attachment; filename="${name}.tar.gz"; filename*=UTF-8''${name}.tar.gz`,
        'binary',
        'private',
      ],
    );
    assert.deepEqual(listing(res.rawPayload, 'tgz'), await expected('main', name));
    const bin = execFileSync('tar', ['-xzOf', '-', `${name}/bin/data.bin`], { input: res.rawPayload });
    assert.deepEqual(bin, BINARY);
  });

  it('takes the format as an extension or a parameter: zip, tar, and the bzip2 names', async () => {
    const sha = await git('rev-parse', 'main');
    const name = `repo-main-${sha}`;
    const cases = [
      ['.zip', 'zip', 'application/zip', 'zip'],
      ['?format=zip', 'zip', 'application/zip', 'zip'],
      ['.tar', 'tar', 'application/octet-stream', 'tar'],
      ['.tbz', 'tbz', 'application/octet-stream', 'tar.bz2'],
      ['?format=bz2', 'tbz', 'application/octet-stream', 'tar.bz2'],
      ['.tgz', 'tgz', 'application/octet-stream', 'tar.gz'],
      ['?format=anything', 'tgz', 'application/octet-stream', 'tar.gz'],
    ] as const;
    for (const [rest, format, type, extension] of cases) {
      const res = await t.expect('GET', archive(rest), alice.token, undefined, 200);
      assert.equal(res.headers['content-type'], type, rest);
      assert.match(
        res.headers['content-disposition'] as string,
        new RegExp(`filename="${name}\\.${extension.replace('.', '\\.')}"`),
        rest,
      );
      assert.deepEqual(listing(res.rawPayload, format), await expected('main', name), rest);
    }
    await t.fails('GET', archive('.rar'), alice.token, undefined, 404, { error: '404 Not Found' });
  });

  it('takes a ref (sha) and a folder (path), each in the name; 404 File Not Found for what is not there', async () => {
    const sha = await git('rev-parse', 'feature/x');
    const res = await t.expect('GET', archive('.tar?sha=feature%2Fx&path=docs'), alice.token, undefined, 200);
    const name = `repo-feature-x-${sha}-docs`;
    assert.match(res.headers['content-disposition'] as string, new RegExp(`filename="${name}\\.tar"`));
    assert.deepEqual(listing(res.rawPayload, 'tar'), await expected('feature/x', name, 'docs'));
    const byId = await t.expect('GET', archive(`.tar?sha=${sha}`), alice.token, undefined, 200);
    assert.deepEqual(listing(byId.rawPayload, 'tar'), await expected('feature/x', `repo-${sha}-${sha}`));
    for (const query of ['?sha=nowhere', '?path=nope', '?path=..%2F..', '?path=%3A(exclude)hello.txt'])
      await t.fails('GET', archive(query), alice.token, undefined, 404, NO_FILE);
    const empty = (await t.ok('POST', '/projects', alice.token, { path: 'empty' }, 201)).id;
    await t.fails('GET', archive('', empty), alice.token, undefined, 404, NO_FILE);
  });

  it("needs the project's code: 403 for a guest of a private project, 404 for a stranger and a visitor", async () => {
    await t.fails('GET', archive(), guest.token, undefined, 403, { message: '403 Forbidden' });
    await t.fails('GET', archive(), stranger.token, undefined, 404, { message: '404 Project Not Found' });
    await t.fails('GET', archive(), null, undefined, 404, { message: '404 Project Not Found' });
  });

  it('runs two git archives at once, and readers that do not read hold up no one', async () => {
    const big = (await t.ok('POST', '/projects', alice.token, { path: 'big', visibility: 'private' }, 201)).id;
    // 24 MB that no compression shrinks: more than the sockets' buffers hold for a reader that does not read.
    const actions = Array.from({ length: 6 }, (_, i) => ({
      action: 'create',
      file_path: `noise-${i}.bin`,
      content: crypto.randomBytes(4 * 1024 * 1024).toString('base64'),
      encoding: 'base64',
    }));
    await t.ok(
      'POST',
      `/projects/${big}/repository/commits`,
      alice.token,
      { branch: 'main', commit_message: 'noise', actions },
      201,
    );
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const ask = (extension = '.tar') => {
      const req = http.get({
        port,
        path: `/api/v4/projects/${big}/repository/archive${extension}`,
        headers: { 'private-token': alice.token },
      });
      const response = new Promise<http.IncomingMessage>((resolve, reject) => {
        req.on('response', resolve);
        req.on('error', reject);
      });
      return { req, response };
    };
    // Two readers that take nothing: their archives were written before their answers began.
    const [first, second] = [ask(), ask()];
    for (const r of [first, second]) (await r.response).pause();
    const third = ask();
    const answeredSoon = await new Promise<boolean>((resolve) => {
      const late = setTimeout(() => resolve(false), 20_000);
      third.response.then(() => {
        clearTimeout(late);
        resolve(true);
      });
    });
    assert.equal(answeredSoon, true, 'a third archive waited for two readers that read nothing');
    const res = await third.response;
    assert.equal(res.statusCode, 200);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    assert.equal(listing(Buffer.concat(chunks), 'tar').filter((n) => n.endsWith('.bin')).length, 6);
    for (const r of [first, second]) r.req.destroy();
    // Five at once: never more than two git archive processes of this test's server, as ps lists them.
    // (ps run without holding this process's loop, which answers the requests.)
    const gits = async () =>
      (await promisify(execFile)('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' })).stdout
        .split('\n')
        .filter((line) => line.includes(' archive ')).length;
    let most = 0;
    // Compressed: a second or so of git's each.
    const asked = Array.from({ length: 5 }, () => ask('.tar.gz'));
    let ended = false;
    const watching = (async () => {
      while (!ended && most < 3) {
        most = Math.max(most, await gits());
        await sleep(5);
      }
    })();
    for (const r of asked) {
      const answer = await r.response;
      answer.resume();
      await new Promise((done) => answer.on('end', done));
    }
    ended = true;
    await watching;
    assert.ok(most >= 1 && most <= 2, `${most} git archive processes at once`);
  });

  it('answers a flood of archives: two made, eight wait within the time budget (408), the rest 429 at once', async () => {
    // A server whose git budget (SNIPPETD_RENDER_BUDGET_MS) is shorter than git takes to compress 24 MB of noise.
    const slow = await createTestApp({ renderBudgetMs: 400 });
    try {
      const owner = await slow.user('alice');
      const big = (await slow.ok('POST', '/projects', owner.token, { path: 'big', visibility: 'private' }, 201)).id;
      const actions = Array.from({ length: 6 }, (_, i) => ({
        action: 'create',
        file_path: `noise-${i}.bin`,
        content: crypto.randomBytes(4 * 1024 * 1024).toString('base64'),
        encoding: 'base64',
      }));
      const commit = { branch: 'main', commit_message: 'noise', actions };
      await slow.ok('POST', `/projects/${big}/repository/commits`, owner.token, commit, 201);
      await slow.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = slow.app.server.address() as AddressInfo;
      const ask = () =>
        new Promise<{ status: number; body: Buffer; retryAfter?: string }>((resolve, reject) => {
          const path = `/api/v4/projects/${big}/repository/archive.tar.gz`;
          http
            .get({ port, path, headers: { 'private-token': owner.token } }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({
                  status: res.statusCode!,
                  body: Buffer.concat(chunks),
                  retryAfter: res.headers['retry-after'] as string | undefined,
                }),
              );
            })
            .on('error', reject);
        });
      const answers = await Promise.all(Array.from({ length: 12 }, ask));
      const count = (status: number) => answers.filter((a) => a.status === status).length;
      assert.deepEqual([count(200), count(408), count(429)], [2, 8, 2]);
      for (const a of answers.filter((a) => a.status === 408))
        assert.deepEqual(JSON.parse(a.body.toString()), { message: '408 Request Timeout' });
      for (const a of answers.filter((a) => a.status === 429)) {
        assert.deepEqual(JSON.parse(a.body.toString()), {
          message: { error: 'This endpoint has been requested too many times. Try again later.' },
        });
        assert.equal(a.retryAfter, '1');
      }
      // The turns are given back: one more is made.
      assert.equal((await ask()).status, 200);
    } finally {
      await slow.close();
    }
  });

  it('gives its turn back when it fails before git runs (no temporary directory): the next archive is made', async () => {
    // A turn was taken before the archive's temporary directory was made, outside what gives it back: a full or
    // missing temporary directory kept both turns, and every archive after it, the disk freed, waited for 408.
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = `/nonexistent-${crypto.randomUUID()}`;
    try {
      for (let i = 0; i < 3; i++)
        await t.fails('GET', archive(), alice.token, undefined, 500, { message: '500 Internal Server Error' });
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
    const started = Date.now();
    await t.expect('GET', archive(), alice.token, undefined, 200);
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
  });
});

// The real git client against git over HTTP (issue 4, items 2-3): clone, fetch and push of project and
// snippet repositories, protocol v2 and v0, who may clone and push, snippet rules enforced on push,
// racing pushes, and `git fsck --strict` of every repository at the end.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fsck } from '../../src/domain/fsck.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

interface GitResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const GIT_TIMEOUT = 20_000;
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-git-home-'));
fs.writeFileSync(
  path.join(home, '.gitconfig'),
  '[user]\n\tname = Tester\n\temail = tester@example.com\n[init]\n\tdefaultBranch = main\n[credential]\n\thelper =\n[advice]\n\tdetachedHead = false\n',
);
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  LANG: 'C',
  LC_ALL: 'C',
};

/** Runs git asynchronously (the server lives in this process) with a hard timeout. */
function git(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<GitResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: opts.cwd ?? home,
      env: { ...GIT_ENV, ...opts.env },
      timeout: GIT_TIMEOUT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started }));
  });
}

async function ok(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<GitResult> {
  const r = await git(args, opts);
  assert.equal(r.code, 0, `git ${args.join(' ')} failed (${r.signal ?? r.code}):\n${r.stderr}`);
  return r;
}

/** A refused git command: non-zero exit, not killed by the timeout (no hang). */
async function refused(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<GitResult> {
  const r = await git(args, opts);
  assert.equal(r.signal, null, `git ${args.join(' ')} hung and was killed after ${r.ms} ms`);
  assert.notEqual(r.code, 0, `git ${args.join(' ')} succeeded but should have been refused:\n${r.stderr}`);
  return r;
}

describe('git over HTTP with the real git client', () => {
  let t: TestApp;
  let host: string;
  let work: string;
  const users: Record<string, { id: number; token: string }> = {};
  let pub: { id: number; path: string };
  let priv: { id: number; path: string };
  let n = 0;

  const url = (repoPath: string, token?: string) => `http://${token ? `oauth2:${token}@` : ''}${host}/${repoPath}`;
  const dir = (name: string) => path.join(work, `${name}-${++n}`);
  const commitFile = async (cwd: string, file: string, content: string, message = `add ${file}`) => {
    fs.mkdirSync(path.dirname(path.join(cwd, file)), { recursive: true });
    fs.writeFileSync(path.join(cwd, file), content);
    await ok(['add', '--', file], { cwd });
    await ok(['commit', '-q', '-m', message], { cwd });
  };
  const apiFile = async (projectId: number, file: string, ref = 'main', token: string | null = ROOT_TOKEN) => {
    const res = await t.api(
      'GET',
      `/projects/${projectId}/repository/files/${encodeURIComponent(file)}?ref=${ref}`,
      token,
    );
    return {
      status: res.statusCode,
      content: res.statusCode === 200 ? Buffer.from(res.json.content, 'base64').toString() : null,
    };
  };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-git-work-'));
    for (const name of ['dev', 'rep', 'guest', 'outsider', 'blocked', 'dev2']) users[name] = await t.user(name);
    users.reader = await t.user('reader', { scopes: ['read_repository'] });
    users.apiReader = await t.user('apireader', { scopes: ['read_api'] });
    const p1 = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'pub',
      visibility: 'public',
      initialize_with_readme: true,
    });
    const p2 = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'priv', visibility: 'private' });
    pub = { id: p1.id, path: `${p1.path_with_namespace}.git` };
    priv = { id: p2.id, path: `${p2.path_with_namespace}.git` };
    for (const p of [p1.id, p2.id]) {
      for (const [name, level] of [
        ['dev', 30],
        ['dev2', 30],
        ['rep', 20],
        ['guest', 10],
        ['reader', 30],
        ['apiReader', 30],
        ['blocked', 30],
      ] as const) {
        await t.must('POST', `/projects/${p}/members`, ROOT_TOKEN, { user_id: users[name].id, access_level: level });
      }
    }
  });

  after(async () => {
    await t?.close();
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('clones an empty project, pushes a first commit, and the file is served by the Files API', async () => {
    const d = dir('empty');
    const clone = await ok(['clone', url(priv.path, users.dev.token), d]);
    assert.match(clone.stderr, /empty repository/);
    await commitFile(d, 'hello.txt', 'hello from git\n');
    await ok(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.deepEqual(await apiFile(priv.id, 'hello.txt'), { status: 200, content: 'hello from git\n' });
    assert.equal((await t.must('GET', `/projects/${priv.id}`, ROOT_TOKEN)).default_branch, 'main');
  });

  it('clones a non-empty project anonymously, and fetch sees a file written through the API', async () => {
    await t.must('POST', `/projects/${pub.id}/repository/files/${encodeURIComponent('docs/a.md')}`, ROOT_TOKEN, {
      branch: 'main',
      content: 'A',
      commit_message: 'docs',
    });
    const d = dir('pub');
    await ok(['clone', url(pub.path), d]);
    assert.ok(fs.existsSync(path.join(d, 'README.md')));
    assert.equal(fs.readFileSync(path.join(d, 'docs/a.md'), 'utf8'), 'A');
    await t.must('POST', `/projects/${pub.id}/repository/files/b.txt`, ROOT_TOKEN, {
      branch: 'main',
      content: 'B',
      commit_message: 'b via api',
    });
    await ok(['fetch', 'origin'], { cwd: d });
    assert.equal((await ok(['show', 'origin/main:b.txt'], { cwd: d })).stdout, 'B');
    assert.match((await ok(['log', '-1', '--format=%s', 'origin/main'], { cwd: d })).stdout, /b via api/);
  });

  for (const version of [2, 0] as const) {
    it(`protocol v${version}: clone, fetch and push really use it`, async () => {
      const d = dir(`v${version}`);
      const traced = { env: { GIT_TRACE_PACKET: '1' } };
      const clone = await ok(['-c', `protocol.version=${version}`, 'clone', url(pub.path, users.dev.token), d], traced);
      if (version === 2) {
        assert.match(clone.stderr, /git< version 2/);
        assert.match(clone.stderr, /command=fetch/);
      } else {
        assert.match(clone.stderr, /git< # service=git-upload-pack/);
        assert.doesNotMatch(clone.stderr, /version 2/);
        assert.doesNotMatch(clone.stderr, /command=/);
      }
      await commitFile(d, `v${version}.txt`, `pushed with v${version}\n`);
      await ok(['-c', `protocol.version=${version}`, 'push', 'origin', 'HEAD:main'], { cwd: d, ...traced });
      const fetch = await ok(['-c', `protocol.version=${version}`, 'fetch', 'origin'], { cwd: d, ...traced });
      if (version === 2) assert.match(fetch.stderr, /git< version 2/);
      else assert.doesNotMatch(fetch.stderr, /version 2/);
      assert.deepEqual(await apiFile(pub.id, `v${version}.txt`), { status: 200, content: `pushed with v${version}\n` });
    });
  }

  it('a reporter may clone but not push; a developer may push', async () => {
    const d = dir('rep');
    await ok(['clone', url(priv.path, users.rep.token), d]);
    await commitFile(d, 'rep.txt', 'reporter\n');
    const push = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.match(push.stderr, /403|not allowed/);
    assert.match(push.stderr, /You are not allowed to push code to this project/);
    assert.equal((await apiFile(priv.id, 'rep.txt')).status, 404);
    await ok(['remote', 'set-url', 'origin', url(priv.path, users.dev.token)], { cwd: d });
    await ok(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.deepEqual(await apiFile(priv.id, 'rep.txt'), { status: 200, content: 'reporter\n' });
  });

  it('a read_repository token clones but cannot push', async () => {
    const d = dir('reader');
    await ok(['clone', url(priv.path, users.reader.token), d]);
    assert.ok(fs.existsSync(path.join(d, 'hello.txt')));
    await commitFile(d, 'reader.txt', 'x');
    const push = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.match(push.stderr, /403/);
    assert.equal((await apiFile(priv.id, 'reader.txt')).status, 404);
  });

  it('a read_api token clones but cannot push, as GitLab gives it read-only abilities (Gitlab::Auth)', async () => {
    const d = dir('apireader');
    await ok(['clone', url(priv.path, users.apiReader.token), d]);
    assert.ok(fs.existsSync(path.join(d, 'hello.txt')));
    await commitFile(d, 'apireader.txt', 'x');
    const push = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.match(push.stderr, /403/);
    assert.equal((await apiFile(priv.id, 'apireader.txt')).status, 404);
  });

  it('a private project: anonymous clone fails fast with an authentication error, a non-member gets not found', async () => {
    const anon = await refused(['clone', url(priv.path), dir('anon')]);
    assert.match(anon.stderr, /Authentication failed|could not read Username|terminal prompts disabled/);
    assert.ok(anon.ms < 10_000, `took ${anon.ms} ms`);
    const raw = await fetch(`http://${host}/${priv.path}/info/refs?service=git-upload-pack`);
    assert.equal(raw.status, 401);
    assert.match(raw.headers.get('www-authenticate') ?? '', /^Basic/);
    const outsider = await refused(['clone', url(priv.path, users.outsider.token), dir('outsider')]);
    assert.match(outsider.stderr, /not found/i);
    const bad = await refused(['clone', url(priv.path, 'not-a-real-token'), dir('badtoken')]);
    assert.match(bad.stderr, /Authentication failed/);
  });

  it("a blocked user's token is refused", async () => {
    await t.must('POST', `/users/${users.blocked.id}/block`, ROOT_TOKEN);
    const r = await refused(['clone', url(priv.path, users.blocked.token), dir('blocked')]);
    assert.match(r.stderr, /403/);
    assert.match(r.stderr, /Your account has been blocked/);
    // A public repository clones without credentials (git only sends them when challenged), but a push
    // must authenticate and is refused.
    const d = dir('blocked-pub');
    await ok(['clone', url(pub.path, users.blocked.token), d]);
    await commitFile(d, 'blocked.txt', 'b');
    const push = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.match(push.stderr, /Your account has been blocked/);
    assert.equal((await apiFile(pub.id, 'blocked.txt')).status, 404);
  });

  describe('snippet repositories', () => {
    let pubSnippet: any;
    let privSnippet: any;
    const snippetPath = (s: any) => new URL(s.http_url_to_repo).pathname.slice(1);
    const getSnippet = (s: any) => t.must('GET', `/projects/${pub.id}/snippets/${s.id}`, ROOT_TOKEN);

    before(async () => {
      pubSnippet = await t.must('POST', `/projects/${pub.id}/snippets`, users.dev.token, {
        title: 'pub',
        visibility: 'public',
        files: [{ file_path: 'a.txt', content: 'one\n' }],
      });
      privSnippet = await t.must('POST', `/projects/${pub.id}/snippets`, users.dev.token, {
        title: 'priv',
        visibility: 'private',
        files: [{ file_path: 's.txt', content: 'secret\n' }],
      });
      assert.match(snippetPath(pubSnippet), new RegExp(`/snippets/${pubSnippet.id}\\.git$`));
    });

    it('a public snippet clones anonymously with its files and "Initial commit"', async () => {
      const d = dir('snip');
      await ok(['clone', url(snippetPath(pubSnippet)), d]);
      assert.equal(fs.readFileSync(path.join(d, 'a.txt'), 'utf8'), 'one\n');
      assert.match((await ok(['log', '--format=%s'], { cwd: d })).stdout, /^Initial commit$/m);
    });

    it('a private snippet needs a member', async () => {
      const anon = await refused(['clone', url(snippetPath(privSnippet)), dir('psnip-anon')]);
      assert.match(anon.stderr, /Authentication failed|could not read Username|terminal prompts disabled/);
      const outsider = await refused(['clone', url(snippetPath(privSnippet), users.outsider.token), dir('psnip-out')]);
      assert.match(outsider.stderr, /not found/i);
      const d = dir('psnip-guest');
      await ok(['clone', url(snippetPath(privSnippet), users.guest.token), d]);
      assert.equal(fs.readFileSync(path.join(d, 's.txt'), 'utf8'), 'secret\n');
    });

    it('a push is reflected in files, file_name, raw and updated_at', async () => {
      const before = await getSnippet(pubSnippet);
      await new Promise((r) => setTimeout(r, 20));
      const d = dir('snip-push');
      await ok(['clone', url(snippetPath(pubSnippet), users.dev.token), d]);
      await ok(['rm', '-q', 'a.txt'], { cwd: d });
      await commitFile(d, 'b.txt', 'bee\n');
      await commitFile(d, 'c.txt', 'sea\n');
      await ok(['push', 'origin', 'HEAD:main'], { cwd: d });
      const after = await getSnippet(pubSnippet);
      assert.deepEqual(after.files.map((f: any) => f.path).sort(), ['b.txt', 'c.txt']);
      assert.ok(['b.txt', 'c.txt'].includes(after.file_name), after.file_name);
      assert.ok(
        Date.parse(after.updated_at) > Date.parse(before.updated_at),
        `${after.updated_at} <= ${before.updated_at}`,
      );
      const raw = await t.api('GET', `/projects/${pub.id}/snippets/${pubSnippet.id}/raw`, ROOT_TOKEN);
      assert.equal(raw.body, after.file_name === 'b.txt' ? 'bee\n' : 'sea\n');
      const fileRaw = await t.api(
        'GET',
        `/projects/${pub.id}/snippets/${pubSnippet.id}/files/main/c.txt/raw`,
        ROOT_TOKEN,
      );
      assert.equal(fileRaw.body, 'sea\n');
    });

    it('a pushed executable stays one through API updates of other files, and a move keeps it', async () => {
      const snippet = await t.must('POST', `/projects/${pub.id}/snippets`, users.dev.token, {
        title: 'modes',
        visibility: 'private',
        files: [{ file_path: 'a.txt', content: 'a\n' }],
      });
      const d = dir('snip-modes');
      await ok(['clone', '-q', url(snippetPath(snippet), users.dev.token), d]);
      fs.writeFileSync(path.join(d, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
      await ok(['add', 'run.sh'], { cwd: d });
      await ok(['commit', '-q', '-m', 'executable'], { cwd: d });
      await ok(['push', '-q', 'origin', 'HEAD:main'], { cwd: d });
      const modes = async () => {
        await ok(['pull', '-q', 'origin', 'main'], { cwd: d });
        return (await ok(['ls-tree', 'HEAD'], { cwd: d })).stdout.trim().replace(/ [0-9a-f]{40}\t/g, ' ');
      };
      const update = (files: unknown[]) =>
        t.must('PUT', `/projects/${pub.id}/snippets/${snippet.id}`, users.dev.token, { files });
      await update([{ action: 'update', file_path: 'a.txt', content: 'changed\n' }]);
      assert.equal(await modes(), '100644 blob a.txt\n100755 blob run.sh');
      await update([{ action: 'update', file_path: 'run.sh', content: '#!/bin/sh\necho bye\n' }]);
      assert.equal(await modes(), '100644 blob a.txt\n100755 blob run.sh');
      await update([{ action: 'move', previous_path: 'run.sh', file_path: 'go.sh' }]);
      assert.equal(await modes(), '100644 blob a.txt\n100755 blob go.sh');
      await update([
        { action: 'delete', file_path: 'go.sh' },
        { action: 'create', file_path: 'go.sh', content: 'plain\n' },
      ]);
      assert.equal(await modes(), '100644 blob a.txt\n100644 blob go.sh');
    });

    it('rejects pushes that break the snippet rules and keeps the snippet as it was', async () => {
      const d = dir('snip-bad');
      await ok(['clone', url(snippetPath(pubSnippet), users.dev.token), d]);
      const head = (await ok(['rev-parse', 'HEAD'], { cwd: d })).stdout.trim();
      const before = await getSnippet(pubSnippet);

      for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(d, `many-${i}.txt`), `${i}`);
      await ok(['add', '.'], { cwd: d });
      await ok(['commit', '-q', '-m', 'too many'], { cwd: d });
      const many = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
      assert.match(many.stderr, /Snippet can't have more than 10 files/);

      await ok(['reset', '-q', '--hard', head], { cwd: d });
      await commitFile(d, 'other.txt', 'o');
      const branch = await refused(['push', 'origin', 'HEAD:refs/heads/other'], { cwd: d });
      assert.match(branch.stderr, /only refs\/heads\/main can be pushed/);

      // Two names that are not UTF-8 and would read alike.
      await ok(['reset', '-q', '--hard', head], { cwd: d });
      for (const byte of [0xfe, 0xff])
        fs.writeFileSync(Buffer.concat([Buffer.from(`${d}/x`), Buffer.from([byte])]), 'x');
      await ok(['add', '-A'], { cwd: d });
      await ok(['commit', '-q', '-m', 'not utf-8'], { cwd: d });
      const notUtf8 = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
      assert.match(notUtf8.stderr, /remote: snippetd: file names must be valid UTF-8: "x\uFFFD"/);

      const del = await refused(['push', 'origin', ':main'], { cwd: d });
      assert.match(del.stderr, /cannot be deleted|deletion of the current branch prohibited/);

      const remote = await ok(['ls-remote', 'origin'], { cwd: d });
      assert.match(remote.stdout, new RegExp(`^${head}\\trefs/heads/main$`, 'm'));
      assert.doesNotMatch(remote.stdout, /refs\/heads\/other/);
      assert.deepEqual(await getSnippet(pubSnippet), before);
    });

    it("a guest who is not the author cannot push to someone else's snippet", async () => {
      const d = dir('snip-guest');
      await ok(['clone', url(snippetPath(pubSnippet), users.guest.token), d]);
      await commitFile(d, 'guest.txt', 'g');
      const r = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
      assert.match(r.stderr, /403|not allowed/);
      assert.match(r.stderr, /You are not allowed to update this snippet/);
      assert.ok(!(await getSnippet(pubSnippet)).files.some((f: any) => f.path === 'guest.txt'));
    });
  });

  it('a smart-HTTP POST with another content type is answered 415 by git, and no ref moves', async () => {
    const before = (await ok(['ls-remote', url(pub.path, users.dev.token)])).stdout;
    const basic = `Basic ${Buffer.from(`oauth2:${users.dev.token}`).toString('base64')}`;
    for (const service of ['git-upload-pack', 'git-receive-pack']) {
      const res = await t.request({
        method: 'POST',
        url: `/${pub.path}/${service}`,
        token: null,
        headers: { 'content-type': 'text/plain', authorization: basic },
        payload: '0000',
      });
      assert.equal(res.statusCode, 415, res.body);
      assert.equal(
        res.body,
        `Expected POST with Content-Type 'application/x-${service}-request', but received 'text/plain' instead.\n`,
      );
    }
    assert.equal((await ok(['ls-remote', url(pub.path, users.dev.token)])).stdout, before);
  });

  const raceSetup = async (tag: string) => {
    const a = dir(`race-a-${tag}`);
    const b = dir(`race-b-${tag}`);
    await ok(['clone', url(priv.path, users.dev.token), a]);
    await ok(['clone', url(priv.path, users.dev2.token), b]);
    await commitFile(a, `${tag}-a.txt`, 'a', `${tag} commit A`);
    await commitFile(b, `${tag}-b.txt`, 'b', `${tag} commit B`);
    return { a, b };
  };
  /** The loser fetches (the winner's commit is there), rebases and pushes: both commits end up on main. */
  const loserCatchesUp = async (tag: string, loserDir: string, winnerMsg: string) => {
    await ok(['fetch', 'origin'], { cwd: loserDir });
    const log = (await ok(['log', '--format=%s', 'origin/main'], { cwd: loserDir })).stdout;
    assert.match(log, new RegExp(`^${winnerMsg}$`, 'm'));
    assert.match(log, /^add hello\.txt$/m);
    await ok(['pull', '-q', '--rebase', 'origin', 'main'], { cwd: loserDir });
    await ok(['push', 'origin', 'HEAD:main'], { cwd: loserDir });
    assert.equal((await apiFile(priv.id, `${tag}-a.txt`)).content, 'a');
    assert.equal((await apiFile(priv.id, `${tag}-b.txt`)).content, 'b');
  };

  it('two clones racing to push the same branch: the later one is told to fetch first, nothing is lost', async () => {
    const { a, b } = await raceSetup('seq');
    await ok(['push', 'origin', 'HEAD:main'], { cwd: a });
    const loser = await refused(['push', 'origin', 'HEAD:main'], { cwd: b });
    assert.match(loser.stderr, /fetch first/);
    await loserCatchesUp('seq', b, 'seq commit A');
  });

  it('two simultaneous pushes to the same branch: exactly one wins, the other is rejected, nothing is lost', async () => {
    const { a, b } = await raceSetup('sim');
    const [ra, rb] = await Promise.all([
      git(['push', 'origin', 'HEAD:main'], { cwd: a }),
      git(['push', 'origin', 'HEAD:main'], { cwd: b }),
    ]);
    assert.equal(ra.signal, null);
    assert.equal(rb.signal, null);
    assert.equal(
      [ra, rb].filter((r) => r.code === 0).length,
      1,
      `exactly one push wins:\nA: ${ra.code} ${ra.stderr}\nB: ${rb.code} ${rb.stderr}`,
    );
    const [loser, loserDir, winnerMsg] = ra.code === 0 ? [rb, b, 'sim commit A'] : [ra, a, 'sim commit B'];
    // When both clients read the same ref advertisement, git's client cannot say "fetch first": the
    // database's compare-and-swap, in the pre-receive step, refuses the second push whole.
    assert.match(
      loser.stderr,
      /fetch first|remote: snippetd: the repository changed during the push; fetch and push again/,
      loser.stderr,
    );
    // The refused push left nothing a ref names unstored, nor anything damaged (snippetd fsck's problems).
    assert.deepEqual((await fsck(t.app.store, false)).problems, []);
    await loserCatchesUp('sim', loserDir, winnerMsg);
  });

  it('a push whose branch moves after the ref advertisement is refused by the compare-and-swap, and stores nothing of itself', async () => {
    const d = dir('cas');
    await ok(['clone', '-q', url(priv.path, users.dev.token), d]);
    await commitFile(d, 'cas-pushed.txt', 'pushed, never stored\n', 'the push that loses');
    const ids = (await ok(['rev-parse', 'HEAD', 'HEAD^{tree}', 'HEAD:cas-pushed.txt'], { cwd: d })).stdout.split('\n');
    // git runs pre-push after it has read the ref advertisement and before it sends the pack: the hook
    // commits through the API, so the branch the push names as its old value has moved by the time it lands.
    const status = path.join(d, 'hook-status');
    fs.writeFileSync(
      path.join(d, '.git', 'hooks', 'pre-push'),
      `#!/bin/sh\ncurl -s -o /dev/null -w '%{http_code}' -X POST -H 'PRIVATE-TOKEN: ${ROOT_TOKEN}' -H 'content-type: application/json' --data '{"branch":"main","content":"moved\\n","commit_message":"moved by the API"}' http://${host}/api/v4/projects/${priv.id}/repository/files/cas-moved.txt > ${status}\n`,
      { mode: 0o755 },
    );
    const loser = await refused(['push', 'origin', 'HEAD:main'], { cwd: d });
    assert.equal(fs.readFileSync(status, 'utf8'), '201');
    assert.match(loser.stderr, /remote: snippetd: the repository changed during the push; fetch and push again/);
    assert.match(loser.stderr, /! \[remote rejected\] HEAD -> main \(pre-receive hook declined\)/);
    // The branch is the API's commit, and not one of the push's objects is in the rows.
    assert.equal((await apiFile(priv.id, 'cas-moved.txt')).content, 'moved\n');
    assert.equal((await apiFile(priv.id, 'cas-pushed.txt')).status, 404);
    const stored = await t.app.store.kysely
      .selectFrom('git_objects')
      .select('oid')
      .where(
        'oid',
        'in',
        ids.filter(Boolean).map((id) => Buffer.from(id, 'hex')),
      )
      .execute();
    assert.deepEqual(stored, []);
  });

  it("a pushed branch can be neither a folder of another nor inside one: refused with git's message, the rows untouched", async () => {
    const d = dir('ref-clash');
    await ok(['clone', '-q', url(pub.path, ROOT_TOKEN), d]);
    await ok(['push', '-q', 'origin', 'HEAD:refs/heads/clash'], { cwd: d });
    const before = (await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout;
    await commitFile(d, 'clash.txt', 'inside\n');
    const inside = await refused(['push', 'origin', 'HEAD:refs/heads/clash/inside', 'HEAD:refs/heads/fine'], {
      cwd: d,
    });
    assert.match(
      inside.stderr,
      /remote: snippetd: cannot lock ref 'refs\/heads\/clash\/inside': 'refs\/heads\/clash' exists; cannot create 'refs\/heads\/clash\/inside'/,
    );
    // Refused whole: the other branch of the same push is not there either, and every clone still works.
    assert.equal((await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout, before);
    const fresh = dir('ref-clash-fresh');
    await ok(['clone', '-q', url(pub.path, ROOT_TOKEN), fresh]);
    await ok(['fsck', '--strict'], { cwd: fresh });
    await ok(['push', '-q', 'origin', '--delete', 'clash'], { cwd: d });
  });

  it('a tree of a million paths made of three small trees: its listing refused whole (400), a file written beside it', async () => {
    const d = dir('tree-bomb');
    await ok(['clone', '-q', url(pub.path, users.dev.token), d]);
    const run = (args: string[], input?: string) =>
      execFileSync('git', args, { cwd: d, env: { ...GIT_ENV }, input, encoding: 'utf8' }).trim();
    const names = Array.from({ length: 100 }, (_, i) => `e${String(i).padStart(2, '0')}`);
    let entry = `100644 blob ${run(['hash-object', '-w', '--stdin'], 'x\n')}`;
    for (let level = 0; level < 3; level++) {
      const tree = run(['mktree'], names.map((n) => `${entry}\t${n}\n`).join(''));
      entry = `040000 tree ${tree}`;
    }
    const commit = run(['commit-tree', entry.split(' ')[2], '-p', 'HEAD', '-m', 'a million paths']);
    await ok(['push', '-q', 'origin', `${commit}:refs/heads/bomb`], { cwd: d });
    const started = Date.now();
    const recursive = await t.api('GET', `/projects/${pub.id}/repository/tree?ref=bomb&recursive=true`, ROOT_TOKEN);
    assert.deepEqual(
      [recursive.statusCode, recursive.json],
      [400, { message: 'Tree is too large: more than 50000 entries' }],
    );
    assert.ok(Date.now() - started < 10_000, `${Date.now() - started} ms`);
    const top = await t.api('GET', `/projects/${pub.id}/repository/tree?ref=bomb&per_page=100`, ROOT_TOKEN);
    assert.deepEqual([top.statusCode, top.json.length, top.headers['x-total']], [200, 100, '100']);
    const write = await t.api('POST', `/projects/${pub.id}/repository/files/new.txt`, ROOT_TOKEN, {
      branch: 'bomb',
      content: 'new',
      commit_message: 'new',
    });
    // A write reads and writes only the trees on its path, as Gitaly does: the million paths stay as they were.
    assert.equal(write.statusCode, 201, write.body);
    const written = await t.api('GET', `/projects/${pub.id}/repository/files/new.txt/raw?ref=bomb`, ROOT_TOKEN);
    assert.deepEqual([written.statusCode, written.body], [200, 'new']);
    const deep = await t.api('GET', `/projects/${pub.id}/repository/files/e99%2Fe42%2Fe07?ref=bomb`, ROOT_TOKEN);
    assert.deepEqual([deep.statusCode, deep.json.blob_id], [200, run(['rev-parse', `${commit}:e99/e42/e07`])]);
    await ok(['push', '-q', 'origin', '--delete', 'bomb'], { cwd: d });
    // One directory of 50,001 files: too large to list, but each file is found along its path.
    const blob = run(['hash-object', '-w', '--stdin'], 'wide\n');
    const wide = run(['mktree'], Array.from({ length: 50_001 }, (_, i) => `100644 blob ${blob}\tf${i}\n`).join(''));
    await ok(['push', '-q', 'origin', `${run(['commit-tree', wide, '-m', 'wide'])}:refs/heads/wide`], { cwd: d });
    const file = await t.api('GET', `/projects/${pub.id}/repository/files/f50000?ref=wide`, ROOT_TOKEN);
    assert.deepEqual([file.statusCode, file.json.blob_id], [200, blob]);
    const raw = await t.api('GET', `/projects/${pub.id}/repository/files/f7/raw?ref=wide`, ROOT_TOKEN);
    assert.deepEqual([raw.statusCode, raw.body], [200, 'wide\n']);
    const listing = await t.api('GET', `/projects/${pub.id}/repository/tree?ref=wide`, ROOT_TOKEN);
    assert.equal(listing.statusCode, 400);
    await ok(['push', '-q', 'origin', '--delete', 'wide'], { cwd: d });
  });

  it('a commit over 1 MB or a tree over 2 MB is refused with its size, and the files API refuses such a message', async () => {
    const d = dir('structure-limits');
    await ok(['clone', '-q', url(pub.path, users.dev.token), d]);
    const run = (args: string[], input?: string) =>
      execFileSync('git', args, { cwd: d, env: { ...GIT_ENV }, input, encoding: 'utf8', maxBuffer: 1 << 26 }).trim();
    const before = (await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout;
    const head = run(['rev-parse', 'HEAD^{tree}']);
    // 1 MiB of message lines: every read at this commit parsed it whole.
    const long = run(['commit-tree', head, '-p', 'HEAD'], `subject\n\n${'<line>\n'.repeat(150_000)}`);
    const commit = await refused(['push', 'origin', `${long}:refs/heads/long-commit`], { cwd: d });
    assert.match(
      commit.stderr,
      new RegExp(`remote: snippetd: The commit ${long} is larger than the allowed size of 1 MB\\.`),
    );
    // 24,000 entries of 80-character names: 2.5 MB in one tree, under the folder "flat".
    const blob = run(['hash-object', '-w', '--stdin'], 'flat\n');
    const names = Array.from({ length: 24_000 }, (_, i) => `${String(i).padStart(6, '0')}${'n'.repeat(74)}`);
    const flat = run(['mktree'], names.map((n) => `100644 blob ${blob}\t${n}\n`).join(''));
    const root = run(['mktree'], `040000 tree ${flat}\tflat\n`);
    const wide = run(['commit-tree', root, '-p', 'HEAD', '-m', 'flat']);
    const tree = await refused(['push', 'origin', `${wide}:refs/heads/flat`], { cwd: d });
    assert.match(tree.stderr, /remote: snippetd: Tree "flat" is larger than the allowed size of 2 MB\./);
    assert.equal((await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout, before);
    const write = await t.api('POST', `/projects/${pub.id}/repository/files/long.txt`, ROOT_TOKEN, {
      branch: 'main',
      content: 'long',
      commit_message: 'm'.repeat(1024 * 1024),
    });
    assert.deepEqual(
      [write.statusCode, write.json],
      [400, { error: 'commit_message is too long (maximum is 960 KB)' }],
    );
    // The files API writes no commit or tree a push may not bring either.
    const author = await t.api('POST', `/projects/${pub.id}/repository/files/author.txt`, ROOT_TOKEN, {
      branch: 'main',
      content: 'author',
      commit_message: 'author',
      author_name: 'n'.repeat(1024 * 1024),
    });
    assert.deepEqual(
      [author.statusCode, author.json],
      [400, { message: 'The commit would be larger than the allowed size of 1 MB' }],
    );
    // 19,416 entries of 108 bytes: 2,096,928 bytes, just under 2 MiB; one more name of 255 characters passes it.
    const near = Array.from({ length: 19_416 }, (_, i) => `${String(i).padStart(6, '0')}${'n'.repeat(74)}`);
    const nearTree = run(['mktree'], near.map((n) => `100644 blob ${blob}\t${n}\n`).join(''));
    const nearRoot = run(['mktree'], `040000 tree ${nearTree}\tflat\n`);
    await ok(['push', '-q', 'origin', `${run(['commit-tree', nearRoot, '-m', 'near'])}:refs/heads/near`], { cwd: d });
    const grown = await t.api('POST', `/projects/${pub.id}/repository/files/flat%2F${'z'.repeat(255)}`, ROOT_TOKEN, {
      branch: 'near',
      content: 'z',
      commit_message: 'grow',
    });
    assert.deepEqual(
      [grown.statusCode, grown.json],
      [400, { message: 'The tree would be larger than the allowed size of 2 MB' }],
    );
    await ok(['push', '-q', 'origin', '--delete', 'near'], { cwd: d });
    // Two commits of 900 KB of messages under 1 MB are taken and listed whole (a list of them is made in turns).
    const messages = ['"', '\u0001'].map((c) => `${c.repeat(100)}\n\n${c.repeat(900_000)}`);
    let parent = run(['rev-parse', 'HEAD']);
    for (const message of messages) parent = run(['commit-tree', head, '-p', parent], message);
    await ok(['push', '-q', 'origin', `${parent}:refs/heads/long-messages`], { cwd: d });
    const listed = await t.ok(
      'GET',
      `/projects/${pub.id}/repository/commits?ref_name=long-messages&per_page=2`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    assert.deepEqual(
      listed.map((c: any) => [c.title, c.message]),
      [...messages].reverse().map((m) => [m.slice(0, 100), m]),
    );
    await ok(['push', '-q', 'origin', '--delete', 'long-messages'], { cwd: d });
  });

  it('a history of more than 10,000 commits is listed page by page without its total (counted up to 10,000)', async () => {
    const d = dir('long-history');
    await ok(['clone', '-q', url(pub.path, users.dev.token), d]);
    const base = (await ok(['rev-parse', 'HEAD'], { cwd: d })).stdout.trim();
    const commits = Array.from(
      { length: 10_001 },
      (_, i) =>
        `commit refs/heads/long\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata ${String(i).length}\n${i}\n${i === 0 ? `from ${base}\n` : ''}\n`,
    ).join('');
    execFileSync('git', ['fast-import', '--quiet'], { cwd: d, env: { ...GIT_ENV }, input: commits });
    await ok(['push', '-q', 'origin', 'refs/heads/long:refs/heads/long'], { cwd: d });
    const list = (query: string) =>
      t.api('GET', `/projects/${pub.id}/repository/commits?ref_name=long&${query}`, ROOT_TOKEN);
    const first = await list('per_page=3');
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json.map((c: any) => c.id),
      (await ok(['log', '-3', '--format=%H', 'long'], { cwd: d })).stdout.trim().split('\n'),
    );
    assert.deepEqual(
      [first.headers['x-total'], first.headers['x-total-pages'], first.headers['x-next-page']],
      [undefined, undefined, '2'],
    );
    // The last page: the project's first commit, then nothing more.
    const last = await list('per_page=100&page=101');
    assert.deepEqual(
      last.json.map((c: any) => c.id),
      (await ok(['log', '--format=%H', '--skip=10000', 'long'], { cwd: d })).stdout.trim().split('\n'),
    );
    assert.equal(last.headers['x-next-page'], '');
    await ok(['push', '-q', 'origin', '--delete', 'long'], { cwd: d });
  });

  it('a walk through history from an empty object cache lists what git log lists, page by page, with and without a path', async () => {
    // Three writes of a history with a merge (two pushes of many commits, then commits made by the API one
    // write each), then every page read with the node's object cache emptied first: the walk reads its
    // commits a batch at a time from the rows, written before the commit it misses.
    const d = dir('cold-walk');
    await ok(['clone', '-q', url(pub.path, users.dev.token), d]);
    const base = (await ok(['rev-parse', 'HEAD'], { cwd: d })).stdout.trim();
    let time = 1_710_000_000;
    const commit = (ref: string, mark: number, from: string, files: string[], merge?: string) =>
      `commit ${ref}\nmark :${mark}\ncommitter T <t@example.com> ${time++} +0000\ndata ${String(mark).length}\n${mark}\n` +
      `from ${from}\n${merge ? `merge ${merge}\n` : ''}` +
      files.map((f) => `M 100644 inline ${f}\ndata ${String(mark).length + 1}\n${mark}\n`).join('') +
      '\n';
    const fastImport = (input: string) =>
      execFileSync('git', ['fast-import', '--quiet'], { cwd: d, env: { ...GIT_ENV }, input });
    let first = '';
    for (let i = 1; i <= 60; i++) {
      const from = i === 1 ? base : `:${i - 1}`;
      first += commit(
        'refs/heads/walk',
        i,
        from,
        i === 1 ? ['n.txt', 'old.txt'] : i % 7 === 0 ? ['n.txt', 'a.txt'] : ['n.txt'],
        i === 30 ? ':104' : undefined,
      );
      if (i === 20)
        for (let j = 0; j < 5; j++)
          first += commit('refs/heads/side', 100 + j, j ? `:${99 + j}` : ':10', ['a.txt', `s${j}.txt`]);
    }
    fastImport(first);
    await ok(['push', '-q', 'origin', 'refs/heads/walk:refs/heads/walk'], { cwd: d });
    let second = '';
    for (let i = 61; i <= 90; i++)
      second += commit(
        'refs/heads/walk',
        i,
        i === 61 ? 'refs/heads/walk^0' : `:${i - 1}`,
        i % 5 ? ['n.txt'] : ['a.txt'],
      );
    fastImport(second);
    await ok(['push', '-q', 'origin', 'refs/heads/walk:refs/heads/walk'], { cwd: d });
    for (let i = 0; i < 4; i++) {
      const file = i % 2 ? 'a.txt' : 'n.txt';
      await t.ok(
        'PUT',
        `/projects/${pub.id}/repository/files/${file}`,
        users.dev.token,
        { branch: 'walk', content: `api ${i}\n`, commit_message: `api ${i}` },
        200,
      );
    }
    await ok(['fetch', '-q', 'origin', '+refs/heads/walk:refs/heads/walk'], { cwd: d });
    assert.match((await ok(['log', '--merges', '--format=%H', 'walk'], { cwd: d })).stdout, /^[0-9a-f]{40}\n$/);

    for (const filePath of [undefined, 'a.txt']) {
      const expected = (
        await ok(['log', '--format=%H', 'walk', ...(filePath ? ['--', filePath] : [])], { cwd: d })
      ).stdout
        .trim()
        .split('\n');
      const listed: string[] = [];
      for (let page = 1; ; page++) {
        t.app.store.objects.clear();
        const query = `ref_name=walk&per_page=9&page=${page}${filePath ? `&path=${filePath}` : ''}`;
        const res = await t.api('GET', `/projects/${pub.id}/repository/commits?${query}`, ROOT_TOKEN);
        assert.equal(res.statusCode, 200);
        // GitLab's commits list sends no totals; the pages end where git's log does.
        assert.equal(res.headers['x-total'], undefined);
        listed.push(...res.json.map((c: any) => c.id));
        if (res.headers['x-next-page'] === '') break;
      }
      assert.deepEqual(listed, expected, filePath ?? 'the whole history');
    }
    t.app.store.objects.clear();
    const file = await t.ok('GET', `/projects/${pub.id}/repository/files/old.txt?ref=walk`, ROOT_TOKEN, undefined, 200);
    assert.equal(
      file.last_commit_id,
      (await ok(['log', '-1', '--format=%H', 'walk', '--', 'old.txt'], { cwd: d })).stdout.trim(),
    );
    await ok(['push', '-q', 'origin', '--delete', 'walk'], { cwd: d });
  });

  it('a ref name git refuses is refused before the rows move (a raw request: git clients never send one)', async () => {
    const before = (await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout;
    const main = /^([0-9a-f]{40})\trefs\/heads\/main$/m.exec(before)![1];
    const pkt = (line: string) => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')}${line}`;
    const header = Buffer.from('PACK\0\0\0\x02\0\0\0\0', 'latin1');
    const emptyPack = Buffer.concat([header, crypto.createHash('sha1').update(header).digest()]);
    for (const ref of [
      'refs/heads/a..b',
      'refs/heads/x.lock/y',
      'refs/tags/a b',
      'refs/heads/c\x01',
      'refs/heads/d@{1}',
    ]) {
      const res = await fetch(`http://${host}/${pub.path}/git-receive-pack`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`x:${users.dev.token}`).toString('base64')}`,
          'content-type': 'application/x-git-receive-pack-request',
        },
        body: Buffer.concat([
          Buffer.from(`${pkt(`${'0'.repeat(40)} ${main} ${ref}\0report-status side-band-64k\n`)}0000`),
          emptyPack,
        ]),
      });
      assert.equal(res.status, 200);
      const report = await res.text();
      // git refuses some of them itself before the hook runs; the others are the hook's to refuse.
      assert.ok(
        report.includes(`snippetd: not a valid ref name: ${JSON.stringify(ref)}`) ||
          report.includes(`refusing to create funny ref '${ref}' remotely`),
        report,
      );
      assert.ok(report.includes(`ng ${ref} `), report);
      if (ref === 'refs/heads/a..b') assert.ok(report.includes('ng refs/heads/a..b pre-receive hook declined'), report);
      assert.equal((await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout, before);
    }
    // A file name that is not UTF-8, in a directory: the API could not name it nor keep it through a write.
    const bad = dir('not-utf8');
    await ok(['clone', '-q', url(pub.path, users.dev.token), bad]);
    fs.mkdirSync(path.join(bad, 'dir'));
    fs.writeFileSync(Buffer.concat([Buffer.from(`${bad}/dir/caf`), Buffer.from([0xe9])]), 'latin-1\n');
    await ok(['add', '-A'], { cwd: bad });
    await ok(['commit', '-q', '-m', 'latin-1 name'], { cwd: bad });
    const notUtf8 = await refused(['push', 'origin', 'HEAD:main'], { cwd: bad });
    assert.match(notUtf8.stderr, /remote: snippetd: file names must be valid UTF-8: "caf\uFFFD"/);
    assert.equal((await ok(['ls-remote', url(pub.path, ROOT_TOKEN)])).stdout, before);
    // Pushes go on as before.
    const d = dir('bad-ref-after');
    await ok(['clone', '-q', url(pub.path, users.dev.token), d]);
    await commitFile(d, 'after-bad-ref.txt', 'after\n');
    await ok(['push', '-q', 'origin', 'HEAD:main'], { cwd: d });
    // A long name is one git takes (the API's 255-character cap is on the branch name alone).
    const long = `refs/heads/${'b'.repeat(250)}`;
    await ok(['push', '-q', 'origin', `HEAD:${long}`], { cwd: d });
    await ok(['push', '-q', 'origin', '--delete', long], { cwd: d });
    assert.equal((await apiFile(pub.id, 'after-bad-ref.txt')).content, 'after\n');
  });

  it('a branch pushed and deleted leaves dangling objects, which fsck lists as git does and does not count as problems', async () => {
    const d = dir('dangling');
    await ok(['clone', '-q', url(pub.path, ROOT_TOKEN), d]);
    await ok(['checkout', '-q', '-b', 'topic'], { cwd: d });
    await commitFile(d, 'topic.txt', 'only on topic\n');
    await ok(['push', '-q', 'origin', 'topic'], { cwd: d });
    const before = await fsck(t.app.store, false);
    await ok(['push', '-q', 'origin', '--delete', 'topic'], { cwd: d });
    const after = await fsck(t.app.store, false);
    assert.deepEqual(after.problems, []);
    const danglingBefore = new Set(before.dangling);
    const added = after.dangling.filter((line) => !danglingBefore.has(line));
    assert.deepEqual(added.map((line) => line.replace(/ [0-9a-f]{40}$/, '')).sort(), [
      `project ${pub.id}: dangling blob`,
      `project ${pub.id}: dangling commit`,
      `project ${pub.id}: dangling tree`,
    ]);
  });

  it("serves from the rows after this node's caches are deleted; a push over the size limit is refused", async () => {
    const s = await t.must('POST', `/projects/${pub.id}/snippets`, ROOT_TOKEN, {
      title: 'cache',
      visibility: 'public',
      files: [{ file_path: 'a.txt', content: 'one\n' }],
    });
    const repo = `${pub.path.replace(/\.git$/, '')}/snippets/${s.id}.git`;
    const raw = async () => (await t.api('GET', `/projects/${pub.id}/snippets/${s.id}/raw`, ROOT_TOKEN)).body;
    await ok(['clone', '-q', url(repo, ROOT_TOKEN), dir('cache')]);
    // Nothing in a node's caches is the truth: remove them all while the server runs.
    fs.rmSync(t.app.gitNode.caches.root, { recursive: true, force: true });
    const again = dir('cache');
    await ok(['clone', '-q', url(repo, ROOT_TOKEN), again]);
    assert.equal(fs.readFileSync(path.join(again, 'a.txt'), 'utf8'), 'one\n');
    await commitFile(again, 'a.txt', 'two\n');
    await ok(['push', '-q', 'origin', 'HEAD:main'], { cwd: again });
    assert.equal(await raw(), 'two\n');

    await t.must('PUT', '/application/settings', ROOT_TOKEN, { snippet_size_limit: 10 });
    try {
      await commitFile(again, 'a.txt', 'more than ten bytes\n');
      const r = await refused(['push', '-q', 'origin', 'HEAD:main'], { cwd: again });
      assert.match(r.stderr, /remote: snippetd: Content is too long \(20 Bytes\)\. The maximum size is 10 Bytes\./);
      assert.equal(await raw(), 'two\n');
    } finally {
      await t.must('PUT', '/application/settings', ROOT_TOKEN, { snippet_size_limit: 52428800 });
    }
  });

  it('git fsck --strict passes on every repository', async () => {
    const repos: string[] = [];
    for (const r of await t.app.store.git.all()) repos.push((await t.gitDir(r.kind, r.owner_id))!);
    assert.ok(repos.length >= 4, `repositories: ${repos.join(', ')}`);
    for (const repo of repos) {
      const r = await git(['--git-dir', repo, 'fsck', '--strict', '--no-progress']);
      assert.equal(r.code, 0, `${repo}: ${r.stdout}${r.stderr}`);
    }
  });
});

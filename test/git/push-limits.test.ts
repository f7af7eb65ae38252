// Pushes that would sink the server (issue 28): a huge file that packs small is refused from its inflated
// size before the server reads it, for a project (max_file_size) and a snippet (snippet_size_limit), with the
// server's memory and event loop measured meanwhile (test/stall.ts); a pack over receive_max_input_size is
// refused by git; a push naming an object it did not send gets git's refusal and an info line. A push
// within the limits is streamed to the database and clones clean. Against a real process, on both databases.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Spawned, spawnServer, cliCommand } from '../../scripts/spawn-server.ts';
import { processStorage } from '../helper.ts';
import { assertCalm, currentRss, MiB, whileHostile } from '../stall.ts';

const TOKEN = 'glpat-pushlimits-root-token';
/** Large enough that holding it would pass the memory bound (half of it), small enough for the suite. */
const ZEROS = 96 * MiB;

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-push-limits-'));
const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
};

function run(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? home, env: opts.env ?? gitEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const git = (args: string[], cwd = home) =>
  run('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd });

async function ok(args: string[], cwd = home): Promise<string> {
  const r = await git(args, cwd);
  assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A file of zeros, sparse on disk, added to the index without writing it out (git hashes it). */
async function addZeros(dir: string, name: string, size: number): Promise<string> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, '');
  fs.truncateSync(file, size);
  await ok(['add', name], dir);
  fs.rmSync(file);
  await ok(['update-index', '--assume-unchanged', name], dir);
  return ok(['rev-parse', `:${name}`], dir);
}

describe('push limits: memory and time bounded whatever the push', () => {
  let server: Spawned;
  let storage: Awaited<ReturnType<typeof processStorage>>;
  let project: { id: number; url: string };
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  const must = async (method: string, url: string, body?: unknown) => {
    const res = await api(method, url, body);
    assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };
  const remote = (repoPath: string) => {
    const u = new URL(server.url);
    return `http://oauth2:${TOKEN}@${u.host}/${repoPath}.git`;
  };
  const branchOf = async (id: number) =>
    (await must('GET', `/projects/${id}/repository/commits?ref_name=main&per_page=1`))[0].id as string;
  /** The server's own dangling objects (snippetd fsck): a refused push must leave none. */
  const fsckDangling = async () => {
    const r = await run(...cliCommand('fsck'), {
      cwd: path.join(import.meta.dirname, '..', '..'),
      env: { ...process.env, SNIPPETD_DATA_DIR: storage.dataDir, SNIPPETD_DATABASE_URL: storage.databaseUrl },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return r.stdout.split('\n').filter((line) => /: dangling /.test(line));
  };
  /** Whether any of this node's serving caches holds the object. */
  const inCache = async (id: string) => {
    const root = path.join(storage.dataDir, 'cache', 'git');
    const repos = fs
      .readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((p) => p.endsWith('HEAD') && fs.existsSync(path.join(root, path.dirname(p), 'objects')))
      .map((p) => path.join(root, path.dirname(p)));
    assert.ok(repos.length > 0, 'no serving cache found');
    for (const repo of repos) if ((await git(['--git-dir', repo, 'cat-file', '-e', id])).code === 0) return true;
    return false;
  };

  before(async () => {
    storage = await processStorage('snippetd-push-limits-');
    server = await spawnServer({
      ...process.env,
      SNIPPETD_DATA_DIR: storage.dataDir,
      SNIPPETD_DATABASE_URL: storage.databaseUrl,
      SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
      SNIPPETD_LOG_LEVEL: 'info',
    });
    const created = await must('POST', '/projects', { path: 'big', initialize_with_readme: true });
    project = { id: created.id, url: remote('root/big') };
    await must('PUT', '/application/settings', { max_file_size: 64 });
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await storage?.remove();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('refuses a large zero file pushed to a project over max_file_size, with git message, memory and stall bounded', async () => {
    const dir = path.join(home, 'project');
    await ok(['clone', '-q', project.url, dir]);
    const before = await branchOf(project.id);
    const blob = await addZeros(dir, 'zeros.bin', ZEROS);
    await ok(['commit', '-qm', 'zeros'], dir);
    const rssBefore = currentRss(server);
    const { answer: push, calm } = await whileHostile(server, () => git(['push', 'origin', 'main'], dir));
    assert.notEqual(push.code, 0);
    assert.match(
      push.stderr,
      /remote: snippetd: File "zeros\.bin" is larger than the allowed size of 64 MB\. Use Git LFS to manage this file\./,
    );
    assert.match(push.stderr, / ! \[remote rejected\] main -> main \(pre-receive hook declined\)/);
    assertCalm(calm, { rssBytes: rssBefore + ZEROS / 2 });
    assert.equal(await branchOf(project.id), before);
    assert.deepEqual(await fsckDangling(), []);
    assert.equal(await inCache(blob), false);
  });

  it('refuses a large zero file pushed to a snippet over snippet_size_limit, memory and stall bounded', async () => {
    const snippet = await must('POST', `/projects/${project.id}/snippets`, {
      title: 'big',
      visibility: 'private',
      files: [{ file_path: 'a.txt', content: 'a\n' }],
    });
    const dir = path.join(home, 'snippet');
    await ok(['clone', '-q', remote(`root/big/snippets/${snippet.id}`), dir]);
    await addZeros(dir, 'zeros.bin', ZEROS);
    await ok(['commit', '-qm', 'zeros'], dir);
    const rssBefore = currentRss(server);
    const { answer: push, calm } = await whileHostile(server, () => git(['push', 'origin', 'HEAD:main'], dir));
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /remote: snippetd: Content is too long \(96 MB\)\. The maximum size is 50 MB\./);
    assert.match(push.stderr, / ! \[remote rejected\] HEAD -> main \(pre-receive hook declined\)/);
    assertCalm(calm, { rssBytes: rssBefore + ZEROS / 2 });
    const files = await must('GET', `/projects/${project.id}/snippets/${snippet.id}`);
    assert.deepEqual(
      files.files.map((f: { path: string }) => f.path),
      ['a.txt'],
    );
    assert.deepEqual(await fsckDangling(), []);
  });

  it('refuses a pack over receive_max_input_size as git does, leaving the branch', async () => {
    const dir = path.join(home, 'input-size');
    await ok(['clone', '-q', project.url, dir]);
    const before = await branchOf(project.id);
    // Random bytes do not compress: a 2 MiB file packs to more than the 1 MiB allowed.
    fs.writeFileSync(path.join(dir, 'random.bin'), crypto.randomBytes(2 * MiB));
    await ok(['add', 'random.bin'], dir);
    await ok(['commit', '-qm', 'random'], dir);
    await must('PUT', '/application/settings', { receive_max_input_size: 1 });
    try {
      const push = await git(['push', 'origin', 'main'], dir);
      assert.notEqual(push.code, 0);
      assert.match(push.stderr, /remote: fatal: pack exceeds maximum allowed size/);
      assert.match(push.stderr, / ! \[remote rejected\] main -> main \(unpacker error\)/);
      assert.equal(await branchOf(project.id), before);
      // Without the limit (null, GitLab's default) the same push is taken.
      await must('PUT', '/application/settings', { receive_max_input_size: null });
      await ok(['push', '-q', 'origin', 'main'], dir);
      assert.equal(await branchOf(project.id), await ok(['rev-parse', 'HEAD'], dir));
    } finally {
      await must('PUT', '/application/settings', { receive_max_input_size: null });
    }
  });

  it('refuses a branch pointed at a blob before the rows move, as git would after them', async () => {
    const dir = path.join(home, 'blob-branch');
    await ok(['clone', '-q', project.url, dir]);
    const blob = await ok(['hash-object', '-w', 'README.md'], dir);
    const push = await git(['push', 'origin', `${blob}:refs/heads/not-a-commit`], dir);
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /remote: snippetd: a branch must point at a commit: refs\/heads\/not-a-commit/);
    const branch = await fetch(`${server.url}/api/v4/projects/${project.id}/repository/tree?ref=not-a-commit`, {
      headers: { 'PRIVATE-TOKEN': TOKEN },
    });
    assert.equal(branch.status, 404, 'no such branch in the rows');
  });

  it('answers a push naming an object it did not send with git refusal, logged at info', async () => {
    const before = await branchOf(project.id);
    const missing = crypto.randomBytes(20).toString('hex');
    const pkt = (line: string) => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')}${line}`;
    const emptyPack = Buffer.from('5041434b0000000200000000029d08823bd8a8eab510ad6ac75c823cfd3ed31e', 'hex');
    const body = Buffer.concat([
      Buffer.from(`${pkt(`${before} ${missing} refs/heads/main\0report-status side-band-64k`)}0000`),
      emptyPack,
    ]);
    const res = await fetch(`${server.url}/root/big.git/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`oauth2:${TOKEN}`).toString('base64')}`,
        'content-type': 'application/x-git-receive-pack-request',
      },
      body,
    });
    assert.equal(res.status, 200);
    const answer = Buffer.from(await res.arrayBuffer()).toString('latin1');
    assert.match(answer, /ng refs\/heads\/main missing necessary objects/);
    assert.ok(answer.includes(missing), `the refusal names ${missing}: ${answer}`);
    assert.equal(await branchOf(project.id), before);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes(missing))
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [[30, 'a git push named objects it did not send']],
    );
    assert.doesNotMatch(server.output(), /a git push failed/);
  });

  it('takes a push within the limits, streamed in batches with bounded memory; a clone of it is clean', async () => {
    const dir = path.join(home, 'within');
    await ok(['clone', '-q', project.url, dir]);
    // More objects than one batch holds, and a file of a few batches' bytes.
    for (let i = 0; i < 700; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
    const large = crypto.randomBytes(20 * MiB);
    fs.writeFileSync(path.join(dir, 'large.bin'), large);
    await ok(['add', '.'], dir);
    await ok(['commit', '-qm', 'many'], dir);
    const { answer: push, calm } = await whileHostile(server, () => git(['push', 'origin', 'main'], dir));
    assert.equal(push.code, 0, push.stderr);
    // Memory only: on SQLite the write and commit of a 20 MiB row run on the event loop (better-sqlite3).
    assert.ok(calm.peakRssBytes < 512 * MiB, JSON.stringify(calm));
    assert.equal(await branchOf(project.id), await ok(['rev-parse', 'HEAD'], dir));
    const raw = await fetch(`${server.url}/api/v4/projects/${project.id}/repository/files/f699.txt/raw?ref=main`, {
      headers: { 'private-token': TOKEN },
    });
    assert.equal(await raw.text(), 'file 699\n');
    const clone = path.join(home, 'within-clone');
    await ok(['clone', '-q', project.url, clone]);
    assert.ok(fs.readFileSync(path.join(clone, 'large.bin')).equals(large));
    const fsck = await git(['fsck', '--strict', '--no-progress'], clone);
    assert.equal(fsck.code, 0, fsck.stdout + fsck.stderr);
    assert.deepEqual(await fsckDangling(), []);
  });
});

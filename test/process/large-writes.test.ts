// Large writes that are accepted (issue 28): a push of a file of random bytes (its stored body as large as
// the file) and an API create of a large file are stored without holding the event loop (test/stall.ts), on
// both databases, and read back whole: the clone is the pushed commit and passes `git fsck`, the raw file is
// the content sent. A write killed part-way leaves no parts behind once the server starts again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exited, type Spawned, spawnServer, cliCommand } from '../../scripts/spawn-server.ts';
import { openDatabase } from '../../src/storage/db/database.ts';
import { processStorage } from '../helper.ts';
import { assertCalm, MiB, whileHostile } from '../stall.ts';

const TOKEN = 'glpat-large-writes-root-token';
/**
 * Large enough that its one row held the event loop over the issue's 250 ms (about 500 ms), small enough for
 * the suite. Measured far under it now, but the bound stays the issue's: on a busy machine an idle server's
 * own loop delay reaches 180 ms.
 */
const SIZE = 32 * MiB;
const CREATE_SIZE = 24 * MiB;

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-large-writes-'));
const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
};

function git(args: string[], cwd = home): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd, env: gitEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(args: string[], cwd = home): Promise<string> {
  const r = await git(args, cwd);
  assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

describe('large accepted writes: stored without holding the event loop', () => {
  let server: Spawned;
  let storage: Awaited<ReturnType<typeof processStorage>>;
  const env = () => ({
    ...process.env,
    SNIPPETD_DATA_DIR: storage.dataDir,
    SNIPPETD_DATABASE_URL: storage.databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  });
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  /** POSTs a JSON body, encoded before (the cheap requests are timed in this process too), while the server is probed. */
  const createWhileProbed = (url: string, body: Uint8Array<ArrayBuffer>) =>
    whileHostile(server, async () => {
      const res = await fetch(`${server.url}/api/v4${url}`, {
        method: 'POST',
        headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
        body,
      });
      return { status: res.status, body: await res.json() };
    });
  const remote = (repoPath: string) => `http://oauth2:${TOKEN}@${new URL(server.url).host}/${repoPath}.git`;
  /** Upload rows and parts not yet named by an object: none once a write is over or the server has started. */
  const leftoverParts = async () => {
    const db = openDatabase(storage.databaseUrl);
    try {
      const uploads = await db.kysely.selectFrom('git_uploads').select('id').execute();
      const parts = await db.kysely
        .selectFrom('git_object_parts')
        .select('upload_id')
        .where(
          'upload_id',
          'not in',
          db.kysely.selectFrom('git_objects').select('parts').where('parts', 'is not', null),
        )
        .execute();
      return { uploads: uploads.length, parts: parts.length };
    } finally {
      await db.close();
    }
  };

  before(async () => {
    storage = await processStorage('snippetd-large-writes-');
    server = await spawnServer(env());
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    if (server) await exited(server.child);
    await storage?.remove();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('takes a push of a large file of random bytes and serves its first clone without holding the event loop', async () => {
    const project = await api('POST', '/projects', { path: 'pushed', initialize_with_readme: true });
    const dir = path.join(home, 'pushed');
    await ok(['clone', '-q', remote('root/pushed'), dir]);
    const content = crypto.randomBytes(SIZE);
    fs.writeFileSync(path.join(dir, 'random.bin'), content);
    await ok(['add', 'random.bin'], dir);
    await ok(['commit', '-qm', 'random'], dir);
    const { answer: push, calm } = await whileHostile(server, () => git(['push', 'origin', 'main'], dir));
    assert.equal(push.code, 0, push.stderr);
    assertCalm(calm);
    const head = await ok(['rev-parse', 'HEAD'], dir);
    const commits = await api('GET', `/projects/${project.id}/repository/commits?ref_name=main&per_page=1`);
    assert.equal(commits[0].id, head);
    // The first clone after the push brings the node's cache of the repository up to date: the new objects'
    // pack is written a piece at a time, never the object whole on the event loop.
    const copy = path.join(home, 'pushed-copy');
    const { answer: clone, calm: cloneCalm } = await whileHostile(server, () =>
      git(['clone', '-q', remote('root/pushed'), copy]),
    );
    assert.equal(clone.code, 0, clone.stderr);
    assertCalm(cloneCalm);
    assert.equal(await ok(['fsck', '--strict', '--no-dangling'], copy), '');
    assert.ok(fs.readFileSync(path.join(copy, 'random.bin')).equals(content), 'the clone has the file pushed');
    const raw = await fetch(`${server.url}/api/v4/projects/${project.id}/repository/files/random.bin/raw?ref=main`, {
      headers: { 'private-token': TOKEN },
    });
    assert.equal(raw.status, 200);
    assert.ok(Buffer.from(await raw.arrayBuffer()).equals(content), 'the API reads the file pushed');
    assert.deepEqual(await leftoverParts(), { uploads: 0, parts: 0 });
    // snippetd's own fsck joins the parts, inflates them and hashes the body to its id.
    const fsck = spawnSync(...cliCommand('fsck'), {
      cwd: path.join(import.meta.dirname, '..', '..'),
      env: env(),
      encoding: 'utf8',
    });
    assert.equal(fsck.status, 0, fsck.stdout + fsck.stderr);
  });

  it('creates a snippet with a large file through the API without holding the event loop', async () => {
    const project = await api('POST', '/projects', { path: 'created' });
    // Random text (it deflates to three quarters of its size), somewhat smaller than the push: reading and
    // parsing a JSON body this large costs the event loop up to 200 ms of its own on a busy machine.
    const content = crypto.randomBytes((CREATE_SIZE * 3) / 4).toString('base64');
    // Encoded before: the cheap requests are timed in this process too.
    const body = new TextEncoder().encode(
      JSON.stringify({ title: 'large', visibility: 'private', files: [{ file_path: 'a.txt', content }] }),
    );
    const { answer, calm } = await createWhileProbed(`/projects/${project.id}/snippets`, body);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assertCalm(calm);
    const raw = await fetch(
      `${server.url}/api/v4/projects/${project.id}/snippets/${answer.body.id}/files/main/a.txt/raw`,
      { headers: { 'private-token': TOKEN } },
    );
    assert.equal(raw.status, 200);
    assert.equal(await raw.text(), content);
    const copy = path.join(home, 'created-copy');
    await ok(['clone', '-q', remote(`root/created/snippets/${answer.body.id}`), copy]);
    assert.equal(await ok(['fsck', '--strict', '--no-dangling'], copy), '');
    assert.equal(fs.readFileSync(path.join(copy, 'a.txt'), 'utf8'), content);
    assert.deepEqual(await leftoverParts(), { uploads: 0, parts: 0 });
  });

  it('creates a snippet of ten files just under a mebibyte each without holding the event loop', async () => {
    // Each file is under the size from which one blob is deflated off the event loop; together they are ten
    // times it (deflated on the loop one by one, they held it 300-600 ms).
    const files = Array.from({ length: 10 }, (_, i) => ({
      file_path: `f${i}.txt`,
      content: crypto.randomBytes(750_000).toString('base64'),
    }));
    const body = new TextEncoder().encode(JSON.stringify({ title: 'ten', visibility: 'private', files }));
    const { answer, calm } = await createWhileProbed('/snippets', body);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assertCalm(calm);
    for (const f of [files[0], files[9]]) {
      const raw = await fetch(`${server.url}/api/v4/snippets/${answer.body.id}/files/main/${f.file_path}/raw`, {
        headers: { 'private-token': TOKEN },
      });
      assert.equal(await raw.text(), f.content);
    }
    const copy = path.join(home, 'ten-copy');
    await ok(['clone', '-q', remote(`snippets/${answer.body.id}`), copy]);
    assert.equal(await ok(['fsck', '--strict', '--no-dangling'], copy), '');
  });

  it('creates a snippet of ten files 2,045 directories deep without holding the event loop', async () => {
    // Paths of 4,096 characters, the most a path may have: each directory is a tree object of its own, and
    // splitting them level by level grew with the square of the depth (held the loop about a second).
    const files = Array.from({ length: 10 }, (_, i) => ({
      file_path: `d${i}/${'a/'.repeat(2045)}x`,
      content: `deep ${i}\n`,
    }));
    const body = new TextEncoder().encode(JSON.stringify({ title: 'deep', visibility: 'private', files }));
    const { answer, calm } = await createWhileProbed('/snippets', body);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assertCalm(calm);
    const last = files[9];
    const raw = await fetch(
      `${server.url}/api/v4/snippets/${answer.body.id}/files/main/${encodeURIComponent(last.file_path)}/raw`,
      { headers: { 'private-token': TOKEN } },
    );
    assert.equal(await raw.text(), last.content);
    // Bare: a checkout's path would be longer than the file system takes.
    const copy = path.join(home, 'deep-copy.git');
    await ok(['clone', '-q', '--bare', remote(`snippets/${answer.body.id}`), copy]);
    assert.equal(await ok(['fsck', '--strict', '--no-dangling'], copy), '');
    assert.equal(`${await ok(['show', `HEAD:${last.file_path}`], copy)}\n`, last.content);
  });

  it('removes at start the parts of a push killed while they were written, and the push left nothing visible', async () => {
    const project = await api('POST', '/projects', { path: 'killed', initialize_with_readme: true });
    const dir = path.join(home, 'killed');
    await ok(['clone', '-q', remote('root/killed'), dir]);
    const before = await ok(['rev-parse', 'HEAD'], dir);
    // The server is still writing its parts (32 statements, each with its turn of the event loop) when killed.
    fs.writeFileSync(path.join(dir, 'random.bin'), crypto.randomBytes(SIZE));
    await ok(['add', 'random.bin'], dir);
    await ok(['commit', '-qm', 'random'], dir);
    const pushing = git(['push', 'origin', 'main'], dir);
    const deadline = Date.now() + 60_000;
    while ((await leftoverParts()).parts < 2) {
      assert.ok(Date.now() < deadline, 'the push never wrote a part');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    server.child.kill('SIGKILL');
    await exited(server.child);
    assert.notEqual((await pushing).code, 0);
    const left = await leftoverParts();
    assert.ok(left.uploads === 1 && left.parts >= 2, `the kill left parts: ${JSON.stringify(left)}`);
    server = await spawnServer(env());
    assert.deepEqual(await leftoverParts(), { uploads: 0, parts: 0 });
    const commits = await api('GET', `/projects/${project.id}/repository/commits?ref_name=main&per_page=1`);
    assert.equal(commits[0].id, before);
  });
});

// Pushes whose commands carry ref names a git client never sends: git receive-pack hands a name on to the
// pre-receive hook as the client sent it, newlines and all, and refuses it only after the hook. Such a push
// is refused whole: nothing moves in the database or in git, no command is hidden from the server's checks,
// and nothing of a name reaches git's command line.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { createTestApp, runGit, type TestApp } from '../helper.ts';
import { longestGapDuring } from '../stall.ts';

const pkt = (payload: string | Buffer) => {
  const body = Buffer.from(payload);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
};

function packOf(dir: string, revs: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['pack-objects', '--stdout', '--revs', '-q'], { cwd: dir });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`pack-objects ${code}`))));
    child.stdin.end(revs);
  });
}

describe('pushes with ref names git refuses only after the hook', () => {
  let t: TestApp;
  let host: string;
  let work: string;
  let alice: { id: number; token: string };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-hostile-push-'));
    alice = await t.user('alice');
  });
  after(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** POSTs `body` to a repository's git-receive-pack as Alice, as git sends a push; the status and the answer. */
  async function receivePack(repository: string, body: Buffer<ArrayBuffer>, headers: Record<string, string> = {}) {
    const res = await fetch(`http://${host}/${repository}/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`oauth2:${alice.token}`).toString('base64')}`,
        'content-type': 'application/x-git-receive-pack-request',
        ...headers,
      },
      body,
    });
    return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
  }

  /** A project of Alice's with a README, its clone, its head H, and C1 on top of it adding b.txt (not pushed). */
  async function projectWithCommit(name: string) {
    await t.ok('POST', '/projects', alice.token, { path: name, initialize_with_readme: true }, 201);
    const dir = path.join(work, name);
    const url = `http://oauth2:${alice.token}@${host}/alice/${name}.git`;
    assert.equal((await runGit(['clone', '-q', url, dir])).code, 0);
    const h = (await runGit(['rev-parse', 'HEAD'], dir)).stdout.trim();
    fs.writeFileSync(path.join(dir, 'b.txt'), 'b\n');
    await runGit(['add', 'b.txt'], dir);
    await runGit(['commit', '-qm', 'b'], dir);
    const c1 = (await runGit(['rev-parse', 'HEAD'], dir)).stdout.trim();
    return { dir, url, h, c1 };
  }

  /**
   * Alice's snippet of `a.txt`, its clone, and two commits on its head: C1 changes a.txt, C2 adds a symbolic
   * link (a snippet holds plain files only). Sends `commands` (given H, C1 and C2) with a pack of both.
   */
  async function pushCommands(name: string, commands: (ids: { h: string; c1: string; c2: string }) => string[]) {
    const snippet = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: name, visibility: 'private', files: [{ file_path: 'a.txt', content: 'one\n' }] },
      201,
    );
    const dir = path.join(work, name);
    const url = `http://oauth2:${alice.token}@${host}/snippets/${snippet.id}.git`;
    assert.equal((await runGit(['clone', '-q', url, dir])).code, 0);
    const rev = async (args: string[]) => (await runGit(args, dir)).stdout.trim();
    const h = await rev(['rev-parse', 'HEAD']);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'changed\n');
    await runGit(['commit', '-qam', 'c1'], dir);
    const c1 = await rev(['rev-parse', 'HEAD']);
    await runGit(['reset', '-q', '--hard', h], dir);
    fs.symlinkSync('/etc/passwd', path.join(dir, 'link'));
    await runGit(['add', 'link'], dir);
    await runGit(['commit', '-qm', 'c2'], dir);
    const c2 = await rev(['rev-parse', 'HEAD']);
    const [first, ...rest] = commands({ h, c1, c2 });
    const body = Buffer.concat([
      pkt(`${first}\0report-status`),
      ...rest.map((command) => pkt(command)),
      Buffer.from('0000'),
      await packOf(dir, `${c1}\n${c2}\n^${h}\n`),
    ]);
    const { status, text: report } = await receivePack(`snippets/${snippet.id}.git`, body);
    const files = await t.ok('GET', `/snippets/${snippet.id}`, alice.token, undefined, 200);
    const raw = await t.expect('GET', `/snippets/${snippet.id}/files/main/a.txt/raw`, alice.token, undefined, 200);
    const clone = path.join(work, `${name}-after`);
    assert.equal((await runGit(['clone', '-q', url, clone])).code, 0);
    const head = (await runGit(['rev-parse', 'HEAD'], clone)).stdout.trim();
    return {
      status,
      report,
      h,
      paths: files.files.map((f: { path: string }) => f.path),
      raw: raw.body,
      head,
    };
  }

  it('a name ending in a newline neither hides the command after it nor moves the branch', async () => {
    const pushed = await pushCommands('hidden', ({ h, c1, c2 }) => [
      `${h} ${c1} refs/heads/main\n`,
      `${h} ${c2} refs/heads/main`,
    ]);
    assert.equal(pushed.status, 403);
    assert.match(pushed.report, /^snippetd: not a valid ref name: "refs\/heads\/main\\n"/);
    assert.deepEqual(
      { paths: pushed.paths, raw: pushed.raw, head: pushed.head },
      { paths: ['a.txt'], raw: 'one\n', head: pushed.h },
    );
  });

  it('a name with a line that puts an option where a commit id goes is refused, and git never runs it', async () => {
    const canary = path.join(t.config.dataDir, 'canary');
    fs.writeFileSync(canary, 'still here\n');
    const pushed = await pushCommands('option', ({ h, c1 }) => [
      `${h} ${c1} refs/heads/main\n${h} --output=../../../../canary refs/heads/main`,
    ]);
    assert.equal(pushed.status, 403);
    assert.match(pushed.report, /^snippetd: not a valid ref name: "refs\/heads\/main\\n/);
    assert.deepEqual(
      { paths: pushed.paths, raw: pushed.raw, head: pushed.head },
      { paths: ['a.txt'], raw: 'one\n', head: pushed.h },
    );
    assert.equal(fs.readFileSync(canary, 'utf8'), 'still here\n');
  });

  it('a branch name that is not UTF-8 is refused before it reaches the database', async () => {
    const { dir, url, h, c1 } = await projectWithCommit('bytes');
    const body = Buffer.concat([
      pkt(
        Buffer.concat([
          Buffer.from(`${'0'.repeat(40)} ${c1} refs/heads/caf`),
          Buffer.from([0xe9]),
          Buffer.from('\0report-status'),
        ]),
      ),
      Buffer.from('0000'),
      await packOf(dir, `${c1}\n^${h}\n`),
    ]);
    assert.match((await receivePack('alice/bytes.git', body)).text, /ng refs\/heads\/caf/);
    const refs = await runGit(['ls-remote', url]);
    assert.deepEqual(
      refs.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[1]),
      ['HEAD', 'refs/heads/main'],
    );
  });

  /** Sends `commands` gzipped, as git lets a client send them, and an empty pack; the answer and the longest gap. */
  async function sendGzipped(repository: string, dir: string, commands: string[]) {
    const [first, ...rest] = commands;
    const body = zlib.gzipSync(
      Buffer.concat([
        pkt(`${first}\0report-status`),
        ...rest.map((c) => pkt(c)),
        Buffer.from('0000'),
        await packOf(dir, ''),
      ]),
    );
    return longestGapDuring(() => receivePack(repository, body, { 'content-encoding': 'gzip' }));
  }

  it('long names, or commands past 4 MiB, are refused before git runs, without holding the server', async () => {
    const snippet = await t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title: 'many', visibility: 'private', files: [{ file_path: 'a.txt', content: 'one\n' }] },
      201,
    );
    const dir = path.join(work, 'many');
    const url = `http://oauth2:${alice.token}@${host}/snippets/${snippet.id}.git`;
    assert.equal((await runGit(['clone', '-q', url, dir])).code, 0);
    const h = (await runGit(['rev-parse', 'HEAD'], dir)).stdout.trim();
    const creations = (count: number, chars: number) =>
      Array.from({ length: count }, (_, i) => `${'0'.repeat(40)} ${h} refs/heads/${String(i).padStart(chars, 'x')}`);
    // 300 names of 60,000 characters: 20 KB gzipped, 18 MB for git, whose answer named each again (helper-59:
    // 2,000 of them made a reply of 120 MB); 1,100 of 4,000: 4.4 MB of commands.
    for (const [commands, refusal] of [
      [creations(300, 60_000), /^snippetd: a ref name of 60011 bytes is longer than 4096/],
      [creations(1_100, 4_000), /^snippetd: the push's commands are larger than 4 MiB/],
    ] as const) {
      const { answer, longestGap } = await sendGzipped(`snippets/${snippet.id}.git`, dir, [...commands]);
      assert.equal(answer.status, 403);
      assert.match(answer.text, refusal);
      assert.ok(longestGap < 150, `the event loop was held ${longestGap.toFixed(0)} ms`);
    }
    const raw = await t.expect('GET', `/snippets/${snippet.id}/files/main/a.txt/raw`, alice.token, undefined, 200);
    assert.equal(raw.body, 'one\n');
  });

  it('a name with a newline inside cannot move a branch it only seems to name', async () => {
    const { dir, url, h, c1 } = await projectWithCommit('inject');
    const body = Buffer.concat([
      pkt(`${'0'.repeat(40)} ${c1} refs/heads/x\n${h} ${c1} refs/heads/main\0report-status`),
      Buffer.from('0000'),
      await packOf(dir, `${c1}\n^${h}\n`),
    ]);
    assert.equal((await receivePack('alice/inject.git', body)).status, 403);
    const refs = await runGit(['ls-remote', url]);
    assert.deepEqual(refs.stdout.trim().split('\n'), [`${h}\tHEAD`, `${h}\trefs/heads/main`]);
  });
});

describe('a push to a server whose data directory is not ASCII', () => {
  it('is taken, the paths git gives the hook read as they are', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-dönnées-'));
    const t = await createTestApp({ dataDir });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-push-utf8-'));
    try {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      const alice = await t.user('alice');
      const snippet = await t.ok(
        'POST',
        '/snippets',
        alice.token,
        { title: 'utf8', visibility: 'private', files: [{ file_path: 'a.txt', content: 'one\n' }] },
        201,
      );
      const dir = path.join(work, 'clone');
      assert.equal(
        (await runGit(['clone', '-q', `http://oauth2:${alice.token}@${host}/snippets/${snippet.id}.git`, dir])).code,
        0,
      );
      fs.writeFileSync(path.join(dir, 'a.txt'), 'two\n');
      await runGit(['commit', '-qam', 'two'], dir);
      const push = await runGit(['push', 'origin', 'main'], dir);
      assert.equal(push.code, 0, push.stderr);
      const raw = await t.expect('GET', `/snippets/${snippet.id}/files/main/a.txt/raw`, alice.token, undefined, 200);
      assert.equal(raw.body, 'two\n');
    } finally {
      await t.close();
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

// Fetches whose bodies no git client sends, anonymous, to a public project: a body sent slowly and never
// finished starts no git process (each held two, http-backend and upload-pack, as long as the client liked);
// a gzipped body of millions of `have` lines is refused before git reads it. A real clone still works.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { createTestApp, ROOT_TOKEN, runGit, type TestApp } from '../helper.ts';

const pkt = (payload: string) => `${(payload.length + 4).toString(16).padStart(4, '0')}${payload}`;

/** The git processes this test process started (git http-backend) and theirs (upload-pack). */
function gitProcesses(): number {
  const parents = new Set([process.pid]);
  let count = 0;
  for (let changed = true; changed; ) {
    changed = false;
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      const ppid = Number(rest?.split(' ')[1]);
      if (parents.has(ppid) && !parents.has(Number(pid))) {
        parents.add(Number(pid));
        changed = true;
        if (comm?.startsWith('git')) count++;
      }
    }
  }
  return count;
}

describe('fetch bodies no git client sends', () => {
  let t: TestApp;
  let port: number;
  let project: { path_with_namespace: string };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'open', visibility: 'public' }, 201);
    await t.ok(
      'POST',
      `/projects/${encodeURIComponent(project.path_with_namespace)}/repository/files/a.txt`,
      ROOT_TOKEN,
      { branch: 'main', content: 'a\n', commit_message: 'a' },
      201,
    );
  });
  after(() => t.close());

  it('a body sent slowly and never finished starts no git process', async () => {
    const sockets: net.Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const socket = net.connect(port, '127.0.0.1');
      sockets.push(socket);
      socket.write(
        `POST /${project.path_with_namespace}.git/git-upload-pack HTTP/1.1\r\nHost: x\r\n` +
          'Content-Type: application/x-git-upload-pack-request\r\nTransfer-Encoding: chunked\r\n\r\n' +
          `1\r\n0\r\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const running = gitProcesses();
    for (const socket of sockets) socket.destroy();
    // Piped to git as it came, each held http-backend and upload-pack: 40.
    assert.equal(running, 0);
  });

  it('a fetch whose client stops reading and hangs up leaves no git process behind', async () => {
    // About 8 MB of pack that deflate leaves large: more than the connection's buffers hold.
    const content = crypto.randomBytes(6 << 20).toString('base64');
    await t.ok(
      'POST',
      `/projects/${encodeURIComponent(project.path_with_namespace)}/repository/files/big.txt`,
      ROOT_TOKEN,
      { branch: 'main', content, commit_message: 'big' },
      201,
    );
    const head = (await runGit(['ls-remote', `http://127.0.0.1:${port}/${project.path_with_namespace}.git`])).stdout;
    const body = `${pkt(`want ${head.split('\t')[0]} ofs-delta\n`)}0000${pkt('done\n')}`;
    for (let i = 0; i < 3; i++) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(
        `POST /${project.path_with_namespace}.git/git-upload-pack HTTP/1.1\r\nHost: x\r\n` +
          `Content-Type: application/x-git-upload-pack-request\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      // The answer's first bytes, then nothing read: git fills the buffers and waits to write more.
      await new Promise((resolve) => socket.once('data', resolve));
      socket.pause();
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.resetAndDestroy();
    }
    let running = gitProcesses();
    for (let waited = 0; running > 0 && waited < 3000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      running = gitProcesses();
    }
    // Each fetch left http-backend, upload-pack and pack-objects waiting to write, for good.
    assert.equal(running, 0);
  });

  it('a gzipped body of millions of have lines is refused (413) before git reads it', async () => {
    const head = (await runGit(['ls-remote', `http://127.0.0.1:${port}/${project.path_with_namespace}.git`])).stdout;
    const want = head.split('\t')[0];
    const haves = Array.from({ length: 400_000 }, (_, i) => pkt(`have ${i.toString(16).padStart(40, '0')}\n`));
    const body = zlib.gzipSync(`${pkt(`want ${want}\n`)}0000${haves.join('')}${pkt('done\n')}`);
    const res = await fetch(`http://127.0.0.1:${port}/${project.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
      body,
    });
    assert.equal(res.status, 413);
    // A real client's fetch goes on as ever.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-hostile-fetch-'));
    try {
      const clone = await runGit(['clone', '-q', `http://127.0.0.1:${port}/${project.path_with_namespace}.git`, dir]);
      assert.equal(clone.code, 0, clone.stderr);
      assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'a\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

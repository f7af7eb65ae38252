// A git request body beyond SNIPPETD_MAX_GIT_BODY_BYTES is cut off with 413 (streamed, never buffered
// whole), the push fails cleanly, and the repository is left as it was.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-gitlimit-'));
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
};

function git(args: string[], cwd = home): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      cwd,
      env,
      timeout: 20_000,
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.resume();
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('git request body limit', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await createTestApp({ maxGitBodyBytes: 64 * 1024 });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    const project = await t.request({
      method: 'POST',
      url: '/api/v4/projects',
      payload: { path: 'limited', visibility: 'private', initialize_with_readme: true },
    });
    assert.equal(project.statusCode, 201);
    url = `http://oauth2:${ROOT_TOKEN}@127.0.0.1:${port}/root/limited.git`;
  });
  after(async () => {
    await t.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('refuses a push larger than the limit and keeps the branch where it was', async () => {
    const dir = path.join(home, 'wc');
    assert.equal((await git(['clone', '-q', url, dir])).code, 0);
    const before = (await t.request({ method: 'GET', url: '/api/v4/projects/root%2Flimited/repository/commits' })).json;
    // Random bytes do not compress: the pack is larger than the 64 KiB limit.
    fs.writeFileSync(path.join(dir, 'big.bin'), crypto.randomBytes(512 * 1024));
    assert.equal((await git(['add', 'big.bin'], dir)).code, 0);
    assert.equal((await git(['commit', '-qm', 'big'], dir)).code, 0);
    const push = await git(['push', 'origin', 'main'], dir);
    assert.notEqual(push.code, 0);
    // Cut off before git answered: 413 (the client reports it as an RPC failure or a hang-up). Cut off
    // after git started answering: receive-pack reports the truncated pack as an unpack failure.
    assert.match(push.stderr, /413|unexpected disconnect|remote end hung up|RPC failed|unpack failed/i);
    const after = (await t.request({ method: 'GET', url: '/api/v4/projects/root%2Flimited/repository/commits' })).json;
    assert.deepEqual(
      after.map((c: { id: string }) => c.id),
      before.map((c: { id: string }) => c.id),
    );
  });

  it('accepts a push within the limit', async () => {
    const dir = path.join(home, 'wc');
    assert.equal((await git(['reset', '-q', '--hard', 'origin/main'], dir)).code, 0);
    fs.writeFileSync(path.join(dir, 'small.txt'), 'small\n');
    assert.equal((await git(['add', 'small.txt'], dir)).code, 0);
    assert.equal((await git(['commit', '-qm', 'small'], dir)).code, 0);
    assert.equal((await git(['push', '-q', 'origin', 'main'], dir)).code, 0);
    const file = await t.request({
      method: 'GET',
      url: '/api/v4/projects/root%2Flimited/repository/files/small.txt/raw',
    });
    assert.equal(file.body, 'small\n');
  });
});

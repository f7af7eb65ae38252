// The pre-receive hook git runs for a push (src/storage/git/hooks/pre-receive), as a process of its own: it
// asks on its file descriptor 3 and passes the answer on; without a server to answer it refuses the push.
// A push through snippetd, which answers it for real, is in git-http.test.ts and the tests of pushes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { HOOKS_DIR } from '../../src/storage/git/push-hooks.ts';

const HOOK = path.join(HOOKS_DIR, 'pre-receive');
const UPDATE = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main`;
const COULD_NOT = 'snippetd: the server could not take the push; try again\n';

/** Runs the hook with git's update line on its stdin; `serve` gets its fd 3 (none when not given). */
function runHook(serve?: (channel: Duplex) => void, PATH = process.env.PATH) {
  const child = spawn(HOOK, [], {
    cwd: '/',
    env: { PATH, GIT_DIR: '.', GIT_QUARANTINE_PATH: '/q' },
    stdio: ['pipe', 'pipe', 'pipe', serve ? 'pipe' : 'ignore'],
  });
  if (serve) serve(child.stdio[3] as Duplex);
  // A hook with no server exits before it reads its input.
  child.stdin?.on('error', () => {}).end(`${UPDATE}\n`);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

/** What the hook sent, once it sent its sixth line, the last, then `answer` (null: close instead). */
const answering =
  (answer: string | null, asked: string[] = []) =>
  (channel: Duplex) => {
    let text = '';
    channel.setEncoding('utf8');
    channel.on('data', (chunk: string) => {
      text += chunk;
      if (text.split('\n').length <= 6) return;
      asked.push(text);
      if (answer === null) channel.destroy();
      else channel.end(answer);
    });
  };

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'opens no database: runs in the SQLite pass only';

describe('the pre-receive hook', { skip }, () => {
  it('sends where git runs it, its objects and the updates in hex, and takes "accept" as a yes', async () => {
    const asked: string[] = [];
    const { code, stderr } = await runHook(answering('accept\n', asked));
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.deepEqual(asked, [
      `cwd=/\nGIT_DIR=.\nGIT_OBJECT_DIRECTORY=\nGIT_ALTERNATE_OBJECT_DIRECTORIES=\nGIT_QUARANTINE_PATH=/q\n${Buffer.from(`${UPDATE}\n`).toString('hex')}\n`,
    ]);
  });

  it('shows a refusal to the client and refuses', async () => {
    const { code, stderr } = await runHook(answering('refuse snippetd: snippets have one branch: only main\n'));
    assert.deepEqual({ code, stderr }, { code: 1, stderr: 'snippetd: snippets have one branch: only main\n' });
  });

  it('refuses when the server closes without an answer, answers otherwise, or is not there', async () => {
    for (const serve of [answering(null), answering('yes\n'), undefined]) {
      const { code, stderr } = await runHook(serve);
      assert.deepEqual({ code, stderr }, { code: 1, stderr: COULD_NOT });
    }
  });

  it('marks its updates as unreadable when od fails, rather than send part of them', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-hook-bin-'));
    try {
      fs.writeFileSync(path.join(bin, 'od'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      for (const tool of ['tr', 'cat'])
        fs.symlinkSync(
          execFileSync('sh', ['-c', `command -v ${tool}`])
            .toString()
            .trim(),
          path.join(bin, tool),
        );
      const asked: string[] = [];
      const { code } = await runHook(answering('refuse snippetd: no\n', asked), bin);
      assert.equal(code, 1);
      assert.equal(asked[0].split('\n')[5], 'failed');
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

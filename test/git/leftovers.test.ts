// What a process killed with SIGKILL leaves on local disk (its serving caches) is removed by the next process
// to start, and nothing a live process uses is touched.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp } from '../helper.ts';

describe('leftovers of killed processes', () => {
  it('are removed at start-up; those of live processes stay', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout.trim());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-leftovers-'));
    const caches = path.join(dataDir, 'cache', 'git');
    fs.mkdirSync(path.join(caches, `${deadPid}-0badcafe`, '7.git'), { recursive: true });
    fs.mkdirSync(path.join(caches, `${process.pid}-0badcafe`), { recursive: true });
    const t = await createTestApp({ dataDir });
    try {
      assert.deepEqual(
        fs.readdirSync(caches).sort(),
        [`${process.pid}-0badcafe`, path.basename(t.app.gitNode.caches.root)].sort(),
      );
    } finally {
      await t.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

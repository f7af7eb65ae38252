// A node's first clone of a repository of many objects: its serving cache is written from every object row
// (storage/git/serving-cache.ts). better-sqlite3 answers at once and the pack is written a mebibyte at a time,
// so 100,000 small objects (40,000 to a mebibyte) were written in a few turns of half a second each.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const OBJECTS = 60_000;
const GIT_ENV = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };

describe("a node's first clone of a repository of 60,000 objects", () => {
  let t: TestApp;
  let project: { id: number };

  before(async () => {
    t = await createTestApp();
    project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'many', initialize_with_readme: true }, 201);
    const dir = (await t.gitDir('project', project.id))!;
    const lines: string[] = [];
    for (let i = 0; i < OBJECTS; i++) lines.push(`blob\nmark :${i + 1}\ndata ${String(i).length + 1}\n${i}\n`);
    lines.push('commit refs/heads/main\ncommitter T <t@example.com> 0 +0000\ndata 2\nt\nfrom refs/heads/main^0\n');
    for (let i = 0; i < OBJECTS; i++) lines.push(`M 100644 :${i + 1} d${Math.floor(i / 1000)}/f${i}\n`);
    execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, env: GIT_ENV, input: `${lines.join('')}\n` });
    await t.importGitDir('project', project.id);
  });
  after(() => t.close());

  it('is written with the event loop free between batches of rows, and whole', async () => {
    fs.rmSync((await t.gitDir('project', project.id))!, { recursive: true }); // as a node that never served it
    let last = performance.now();
    let longestGap = 0;
    const ticks = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    let dir: string;
    try {
      dir = (await t.gitDir('project', project.id))!;
    } finally {
      clearInterval(ticks);
    }
    assert.ok(longestGap < 250, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
    const count = execFileSync('git', ['count-objects', '-v'], { cwd: dir, env: GIT_ENV, encoding: 'utf8' });
    assert.match(count, new RegExp(`^in-pack: ${OBJECTS + OBJECTS / 1000 + 5}$`, 'm'));
    execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, env: GIT_ENV });
  });
});

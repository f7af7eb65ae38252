// A node's caches of repositories (storage/git/serving-cache.ts): past the number it keeps, those refreshed
// least recently are removed once no request uses them, deleted repositories' among them, and built again
// from the rows when asked for.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, ROOT_TOKEN, runGit, type TestApp } from '../helper.ts';
import { ServingCaches } from '../../src/storage/git/serving-cache.ts';
import type { GitRepository } from '../../src/storage/git/repository.ts';

describe("a node's repository caches", () => {
  let t: TestApp;
  let parent: string;

  before(async () => {
    t = await createTestApp();
    parent = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-caches-'));
  });
  after(async () => {
    await t.close();
    fs.rmSync(parent, { recursive: true, force: true });
  });

  it('keeps the most recently refreshed, removes the others once unused, and builds one again when asked', async () => {
    const caches = new ServingCaches(parent, { repositories: 2, idleMs: 0 });
    const repos: GitRepository[] = [];
    for (const name of ['one', 'two', 'three']) {
      const project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: name, initialize_with_readme: true }, 201);
      repos.push((await t.app.store.git.find('project', project.id))!);
    }
    const refresh = (i: number) => caches.exclusive(repos[i].id, () => caches.refresh(repos[i]));
    for (const i of [0, 1, 2]) await refresh(i);
    await caches.exclusive(repos[0].id, async () => {}); // its removal, queued behind any use, is done
    assert.deepEqual(
      repos.map((r) => caches.has(r.id)),
      [false, true, true],
    );
    const dir = await refresh(0);
    assert.equal(caches.has(repos[0].id), true);
    assert.equal((await runGit(['--git-dir', dir, 'fsck', '--strict', '--no-progress'])).code, 0);
    assert.equal((await runGit(['--git-dir', dir, 'log', '--format=%s', 'main'])).stdout.trim(), 'Initial commit');
    await caches.exclusive(repos[1].id, async () => {});
    assert.equal(caches.has(repos[1].id), false);
    caches.close();
  });

  it('keeps a cache while git reads it (a clone, a log, a diff), and removes it at a refresh after', async () => {
    const caches = new ServingCaches(parent, { repositories: 1, idleMs: 0 });
    const repos: GitRepository[] = [];
    for (const name of ['four', 'five', 'six']) {
      const project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: name, initialize_with_readme: true }, 201);
      repos.push((await t.app.store.git.find('project', project.id))!);
    }
    const refresh = (i: number) => caches.exclusive(repos[i].id, () => caches.refresh(repos[i]));
    const settled = (i: number) => caches.exclusive(repos[i].id, async () => {});
    const reading = await caches.refreshForReading(repos[0]);
    await refresh(1);
    await refresh(2);
    await settled(0);
    // Removed under a running clone, the clone failed.
    assert.equal(caches.has(repos[0].id), true);
    const log = await runGit(['--git-dir', reading.dir, 'log', '--format=%s', 'main']);
    assert.equal(log.stdout.trim(), 'Initial commit', log.stderr);
    assert.equal(caches.has(repos[1].id), false);
    reading.release();
    await refresh(2);
    await settled(0);
    assert.deepEqual(
      repos.map((r) => caches.has(r.id)),
      [false, false, true],
    );
    caches.close();
  });
});

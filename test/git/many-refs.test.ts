// A push that creates thousands of refs. Each new ref is checked against the repository's refs for a folder
// clash (refs/heads/a beside refs/heads/a/b) inside the transaction that moves them, which holds the instance's
// writes (SQLite has one writer): the check scanned every ref, once a new ref, so 5,000 tags kept other writes waiting 3.9 s. And a
// clone through the node the push went through: git left a loose file for each ref in its cache, which every
// clone's refresh read again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { writeWaitsDuring } from '../stall.ts';
import { gitWork } from '../process/pushed-repositories.ts';

const TAGS = 3_000;
const work = gitWork('snippetd-many-refs-');
const GIT_ENV = work.env;
const git = (args: string[], cwd: string) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });

describe('a push of 3,000 new tags', () => {
  let t: TestApp;
  let project: { id: number };
  const repo = path.join(work.dir, 'tags');

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'tags' }, 201);
    execFileSync('git', ['init', '-q', '-b', 'main', repo], { env: GIT_ENV });
    git(['commit', '-q', '--allow-empty', '-m', 'tagged'], repo);
    const lines = Array.from({ length: TAGS }, (_, i) => `create refs/tags/v${i} HEAD`);
    execFileSync('git', ['update-ref', '--stdin'], { cwd: repo, env: GIT_ENV, input: `${lines.join('\n')}\n` });
    const remote = new URL(`http://127.0.0.1:${port}/root/tags.git`);
    remote.username = 'root';
    remote.password = ROOT_TOKEN;
    git(['remote', 'add', 'origin', remote.href], repo);
  });
  after(async () => {
    await t.close();
    work.remove();
  });

  it('lets other writes go on while its refs are checked and moved', async () => {
    const waits = await writeWaitsDuring(
      { args: ['push', '-q', 'origin', 'main', '--tags'], cwd: repo, env: GIT_ENV },
      () => t.ok('POST', '/snippets', ROOT_TOKEN, { title: 'meanwhile', file_name: 'a', content: 'a' }, 201),
    );
    assert.ok(Math.max(...waits) < 500, `a write waited ${Math.max(...waits).toFixed(0)} ms`);
  });

  it("keeps no loose ref in the node's cache once it has refreshed it", async () => {
    const dir = (await t.gitDir('project', project.id))!;
    const loose = (sub: string): string[] =>
      fs
        .readdirSync(path.join(dir, sub), { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? loose(`${sub}/${e.name}`) : [`${sub}/${e.name}`]));
    assert.deepEqual(loose('refs'), []);
    const packed = fs.readFileSync(path.join(dir, 'packed-refs'), 'utf8').split('\n');
    assert.equal(packed.filter((line) => line.includes(' refs/tags/v')).length, TAGS);
    // Asked of this process's own server: not with execFileSync, which would hold the loop that answers it.
    const listed = await promisify(execFile)('git', ['ls-remote', '--tags', 'origin'], { cwd: repo, env: GIT_ENV });
    assert.equal(listed.stdout.trim().split('\n').length, TAGS);
  });
});

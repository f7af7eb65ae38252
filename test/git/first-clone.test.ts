// A push of many objects, and a node's first clone of them. The push's objects are stored a batch a transaction
// before the one that moves its refs (domain/git-access.ts acceptPush): stored in that one, a push of 200,000
// objects held every other write 9 s. The clone's serving cache is written from every object row (storage/git/
// serving-cache.ts): better-sqlite3 answers at once and the pack is written a mebibyte at a time, so 60,000
// small objects (40,000 to a mebibyte) were written in turns of up to 1.3 s.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { longestGapDuring, writeWaitsDuring } from '../stall.ts';
import { gitWork } from '../process/pushed-repositories.ts';

const OBJECTS = 60_000;
const git = gitWork('snippetd-first-clone-');
const GIT_ENV = git.env;

describe('a push of 60,000 objects, and a node’s first clone of them', () => {
  let t: TestApp;
  let project: { id: number; http_url_to_repo: string };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'many' }, 201);
    const lines: string[] = [];
    for (let i = 0; i < OBJECTS; i++) lines.push(`blob\nmark :${i + 1}\ndata ${String(i).length + 1}\n${i}\n`);
    lines.push('commit refs/heads/main\ncommitter T <t@example.com> 0 +0000\ndata 2\nt\n');
    for (let i = 0; i < OBJECTS; i++) lines.push(`M 100644 :${i + 1} d${Math.floor(i / 1000)}/f${i}\n`);
    const repo = git.repository('many', `${lines.join('')}\n`);
    const remote = new URL(`http://127.0.0.1:${port}/root/many.git`);
    remote.username = 'root';
    remote.password = ROOT_TOKEN;
    execFileSync('git', ['remote', 'add', 'origin', remote.href], { cwd: repo, env: GIT_ENV });
  });
  after(async () => {
    await t.close();
    git.remove();
  });

  it('lets other writes go on while the push is stored', async () => {
    const waits = await writeWaitsDuring(
      { args: ['push', '-q', 'origin', 'main'], cwd: path.join(git.dir, 'many'), env: GIT_ENV },
      () => t.ok('POST', '/snippets', ROOT_TOKEN, { title: 'meanwhile', file_name: 'a', content: 'a' }, 201),
    );
    assert.ok(waits.length >= 10, `${waits.length} writes while the push went on`);
    assert.ok(Math.max(...waits) < 500, `a write waited ${Math.max(...waits).toFixed(0)} ms`);
    const tree = await t.ok(
      'GET',
      `/projects/${project.id}/repository/tree?path=d59&per_page=1`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    assert.deepEqual(
      tree.map((e: { path: string }) => e.path),
      ['d59/f59000'],
    );
  });

  it('is written with the event loop free between batches of rows, and whole', async () => {
    fs.rmSync((await t.gitDir('project', project.id))!, { recursive: true }); // as a node that never served it
    const { answer: dir, longestGap } = await longestGapDuring(() => t.gitDir('project', project.id));
    assert.ok(longestGap < 250, `the event loop went ${longestGap.toFixed(0)} ms without a turn`);
    const count = execFileSync('git', ['count-objects', '-v'], { cwd: dir!, env: GIT_ENV, encoding: 'utf8' });
    assert.match(count, new RegExp(`^in-pack: ${OBJECTS + OBJECTS / 1000 + 2}$`, 'm'));
    execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir!, env: GIT_ENV });
  });

  it('reads, at its next refresh, what a push committed while it read its pages', async () => {
    // Two blobs, one whose id sorts before every page the refresh has read, one after.
    const blob = (test: (id: string) => boolean) => {
      for (let i = 0; ; i++) {
        const body = Buffer.from(`written meanwhile ${i}\n`);
        const id = crypto.createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
        if (test(id)) return { id, type: 'blob' as const, size: body.length, data: zlib.deflateSync(body) };
      }
    };
    const low = blob((id) => id.startsWith('00'));
    const high = blob((id) => id.startsWith('ff'));
    fs.rmSync((await t.gitDir('project', project.id))!, { recursive: true });
    const repo = (await t.app.store.git.find('project', project.id))!;
    const refreshing = t.gitDir('project', project.id);
    // The refresh reads its first page now (better-sqlite3 answers at once), then waits a turn: the batch lands.
    await new Promise((resolve) => setImmediate(resolve));
    await t.app.store.transaction((tx) => repo.on(tx.kysely).storeDeflatedBatch([low, high]));
    await refreshing;
    const dir = (await t.gitDir('project', project.id))!;
    for (const { id } of [low, high]) execFileSync('git', ['cat-file', '-e', id], { cwd: dir, env: GIT_ENV });
  });
});

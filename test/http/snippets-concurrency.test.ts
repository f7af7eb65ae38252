// Concurrent updates of one snippet never lose a commit or a field: each update is computed from the head it
// read and written only while that head is still current (compare-and-swap on the row and the branch),
// computed again otherwise, so N racing updates give N commits in a line; and an update writes only the
// fields it was given, so racing updates of different fields keep both.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

const git = (dir: string, ...args: string[]) => spawnSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8' });

describe('concurrent snippet updates', () => {
  let t: TestApp;
  let projectId: number;
  before(async () => {
    t = await createTestApp();
    const project = await t.request({
      method: 'POST',
      url: '/api/v4/projects',
      payload: { path: 'race', visibility: 'public' },
    });
    projectId = project.json.id;
  });
  after(() => t.close());

  it('keeps every one of 9 racing file creations, each in its own commit on top of the last', async () => {
    const created = await t.request({
      method: 'POST',
      url: `/api/v4/projects/${projectId}/snippets`,
      payload: { title: 'race', files: [{ file_path: 'base.txt', content: 'base' }] },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json.id;
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        t.request({
          method: 'PUT',
          url: `/api/v4/projects/${projectId}/snippets/${id}`,
          payload: { files: [{ action: 'create', file_path: `f${i}.txt`, content: `content ${i}` }] },
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.statusCode),
      Array(9).fill(200),
    );
    const final = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${id}` });
    assert.deepEqual(
      final.json.files.map((f: { path: string }) => f.path),
      ['base.txt', ...Array.from({ length: 9 }, (_, i) => `f${i}.txt`)],
    );
    const dir = (await t.gitDir('snippet', id))!;
    const log = git(dir, 'log', '--format=%s', 'main').stdout.trim().split('\n');
    assert.equal(log.length, 10);
    assert.deepEqual(new Set(log), new Set(['Update snippet', 'Initial commit']));
    assert.equal(git(dir, 'rev-list', '--merges', '--count', 'main').stdout.trim(), '0');
    assert.equal(git(dir, 'ls-tree', '-r', '--name-only', 'main').stdout.trim().split('\n').length, 10);
    assert.equal(git(dir, 'fsck', '--strict').status, 0);
    for (let i = 0; i < 9; i++) {
      const raw = await t.request({
        method: 'GET',
        url: `/api/v4/projects/${projectId}/snippets/${id}/files/main/f${i}.txt/raw`,
      });
      assert.equal(raw.body, `content ${i}`);
    }
  });

  it('keeps both of two racing updates of different fields (title, description, visibility)', async () => {
    const created = await t.request({
      method: 'POST',
      url: `/api/v4/projects/${projectId}/snippets`,
      payload: { title: 'fields', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a' }] },
    });
    const url = `/api/v4/projects/${projectId}/snippets/${created.json.id}`;
    for (let round = 0; round < 10; round++) {
      const changes = [{ title: `title ${round}` }, { description: `description ${round}` }];
      if (round % 2)
        changes.push({ files: [{ action: 'update', file_path: 'a.txt', content: `a ${round}` }] } as never);
      const results = await Promise.all(changes.map((payload) => t.request({ method: 'PUT', url, payload })));
      assert.deepEqual(
        results.map((r) => r.statusCode),
        changes.map(() => 200),
      );
      const { json } = await t.request({ method: 'GET', url });
      assert.deepEqual(
        [json.title, json.description, json.visibility],
        [`title ${round}`, `description ${round}`, 'private'],
      );
    }
  });
});

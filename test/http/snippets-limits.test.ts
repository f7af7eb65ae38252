// Size limits (docs/gitlab-compatibility.md#snippet-limits): description 1 MiB, content up to the instance
// snippet_size_limit (50 MiB by default, which the request body limit must let through), answered with Rails' sizes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

describe('snippet size limits', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await createTestApp();
    const project = await t.request({
      method: 'POST',
      url: '/api/v4/projects',
      payload: { path: 'limits', visibility: 'public' },
    });
    url = `/api/v4/projects/${project.json.id}/snippets`;
  });
  after(() => t.close());

  const count = async () => (await t.request({ method: 'GET', url })).json.length;

  it('refuses a description over 1 MiB with the model error and writes nothing', async () => {
    const res = await t.request({
      method: 'POST',
      url,
      payload: { title: 't', description: 'd'.repeat(1024 * 1024 + 1), files: [{ file_path: 'a', content: 'b' }] },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { message: { error: 'Description is too long (1 MB). The maximum size is 1 MB.' } });
    assert.equal(await count(), 0);
  });

  it('refuses content over snippet_size_limit, on create and on update, joining messages as a sentence', async () => {
    const set = await t.request({
      method: 'PUT',
      url: '/api/v4/application/settings',
      payload: { snippet_size_limit: 2048 },
    });
    assert.equal(set.statusCode, 200);
    const big = await t.request({
      method: 'POST',
      url,
      payload: { title: 'x'.repeat(256), files: [{ file_path: 'a', content: 'b'.repeat(3000) }] },
    });
    assert.equal(big.statusCode, 400);
    assert.deepEqual(big.json, {
      message: {
        error:
          'Title is too long (maximum is 255 characters) and Content is too long (2.93 KB). The maximum size is 2 KB.',
      },
    });
    const ok = await t.request({
      method: 'POST',
      url,
      payload: { title: 't', files: [{ file_path: 'a', content: 'b'.repeat(2048) }] },
    });
    assert.equal(ok.statusCode, 201);
    const grow = await t.request({
      method: 'PUT',
      url: `${url}/${ok.json.id}`,
      payload: { files: [{ action: 'create', file_path: 'c', content: 'c' }] },
    });
    assert.equal(grow.statusCode, 400);
    assert.deepEqual(grow.json, { message: { error: 'Content is too long (2 KB). The maximum size is 2 KB.' } });
    const raw = await t.request({ method: 'GET', url: `${url}/${ok.json.id}/raw` });
    assert.equal(raw.body.length, 2048);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', payload: { snippet_size_limit: 52428800 } });
  });

  it('stores and serves a 40 MiB file byte for byte', async () => {
    const content = 'abcdefghij\n'.repeat(4 * 1024 * 1024 - 1000).slice(0, 40 * 1024 * 1024);
    const res = await t.request({
      method: 'POST',
      url,
      payload: { title: 'large', files: [{ file_path: 'big.txt', content }] },
    });
    assert.equal(res.statusCode, 201, res.body.slice(0, 200));
    const raw = await t.request({ method: 'GET', url: `${url}/${res.json.id}/files/main/big.txt/raw` });
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(raw.rawPayload.length, Buffer.byteLength(content));
    assert.ok(raw.body === content);
    // The same file read from the repository (a revision other than the mirrored head names).
    const dir = (await t.gitDir('snippet', res.json.id))!;
    const sha = spawnSync('git', ['--git-dir', dir, 'rev-parse', 'main'], { encoding: 'utf8' })
      .stdout.trim()
      .slice(0, 10);
    const fromGit = await t.request({ method: 'GET', url: `${url}/${res.json.id}/files/${sha}/big.txt/raw` });
    assert.equal(fromGit.statusCode, 200);
    assert.ok(fromGit.body === content);
  });
});

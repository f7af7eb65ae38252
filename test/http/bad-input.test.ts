// Bad input found by reading the change: each gets GitLab's 4xx answer, never a 500, and writes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../helper.ts';

describe('bad input', () => {
  let t: TestApp;
  let projectId: number;
  before(async () => {
    t = await createTestApp();
    const project = await t.api('POST', '/projects', t.config.initialRootToken, {
      path: 'bad',
      visibility: 'public',
      initialize_with_readme: true,
    });
    projectId = project.json.id;
  });
  after(() => t.close());

  it('answers a URL that is not valid percent-encoding with 400 in GitLab shape', async () => {
    for (const url of [
      '/projects/%E0%A4%A',
      `/projects/1/snippets/1/files/main/%E0%A4%A/raw`,
      '/projects/1/templates/gitignores/%E0%A4%A',
    ]) {
      const res = await t.api('GET', url, null);
      assert.equal(res.statusCode, 400, url);
      assert.deepEqual(res.json, { message: '400 Bad request - invalid URL encoding' });
      assert.equal(res.headers['content-type'], 'application/json');
    }
  });

  it('refuses a commits path with a NUL byte as an invalid file path', async () => {
    const res = await t.api('GET', `/projects/${projectId}/repository/commits?path=a%00b`, null);
    assert.deepEqual([res.statusCode, res.json], [400, { error: 'path should be a valid file path' }]);
  });

  it("refuses repository files that would be a file and a directory at once, with Gitaly's messages", async () => {
    const root = t.config.initialRootToken;
    const under = await t.api('POST', `/projects/${projectId}/repository/files/README.md%2Fsub`, root, {
      branch: 'main',
      content: 'x',
      commit_message: 'm',
    });
    assert.deepEqual([under.statusCode, under.json], [400, { message: 'A file with this name already exists' }]);
    await t.ok(
      'POST',
      `/projects/${projectId}/repository/files/dir%2Fa.txt`,
      root,
      { branch: 'main', content: 'x', commit_message: 'm' },
      201,
    );
    const over = await t.api('POST', `/projects/${projectId}/repository/files/dir`, root, {
      branch: 'main',
      content: 'x',
      commit_message: 'm',
    });
    assert.deepEqual([over.statusCode, over.json], [400, { message: 'A directory with this name already exists' }]);
    const repo = (await t.gitDir('project', projectId))!;
    assert.equal(spawnSync('git', ['--git-dir', repo, 'fsck', '--strict']).status, 0);
    assert.equal(
      spawnSync('git', ['--git-dir', repo, 'rev-list', '--count', 'main'], { encoding: 'utf8' }).stdout.trim(),
      '2',
    );
  });

  it('refuses snippet files that would be a file and a directory at once, on create and on update', async () => {
    const base = `/projects/${projectId}/snippets`;
    const root = t.config.initialRootToken;
    const clash = await t.api('POST', base, root, {
      title: 't',
      files: [
        { file_path: 'a', content: '1' },
        { file_path: 'a/b', content: '2' },
      ],
    });
    assert.deepEqual(
      [clash.statusCode, clash.json],
      [400, { message: { error: 'Repository Error creating the snippet' } }],
    );
    const snippet = await t.ok('POST', base, root, { title: 't', files: [{ file_path: 'a/b', content: '2' }] }, 201);
    const update = await t.api('PUT', `${base}/${snippet.id}`, root, {
      files: [{ action: 'create', file_path: 'a', content: '1' }],
    });
    assert.deepEqual(
      [update.statusCode, update.json],
      [400, { message: { error: 'Repository Error updating the snippet' } }],
    );
    const after = await t.ok('GET', `${base}/${snippet.id}`, root, undefined, 200);
    assert.deepEqual(
      after.files.map((f: { path: string }) => f.path),
      ['a/b'],
    );
    const repo = (await t.gitDir('snippet', snippet.id))!;
    assert.equal(spawnSync('git', ['--git-dir', repo, 'fsck', '--strict']).status, 0);
  });
});

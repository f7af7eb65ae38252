// A personal snippet's repository at /snippets/:id.git (GitLab's http_url_to_repo): cloned by whoever may
// read it, pushed by its author only, each push reflected in the API as a project snippet's is, and `git
// fsck --strict` clean.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, runGit, type TestApp } from '../helper.ts';

describe('personal snippet repositories over HTTP', () => {
  let t: TestApp;
  let host: string;
  let work: string;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };
  const cloneUrl = (token: string | null, id: number) =>
    `http://${token ? `oauth2:${token}@` : ''}${host}/snippets/${id}.git`;
  /** Alice's snippet of one file, `a.txt`. */
  const alicesSnippet = (title: string, visibility: string) =>
    t.ok(
      'POST',
      '/snippets',
      alice.token,
      { title, visibility, files: [{ file_path: 'a.txt', content: 'one\n' }] },
      201,
    );

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-personal-git-'));
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  after(async () => {
    await t.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('clones, pushes and shows the push in the API; others may clone a public one but not push', async () => {
    const created = await alicesSnippet('mine', 'public');
    assert.equal(created.http_url_to_repo.replace(/^http:\/\/[^/]+/, ''), `/snippets/${created.id}.git`);
    const dir = path.join(work, 'alice');
    const clone = await runGit(['clone', cloneUrl(alice.token, created.id), dir]);
    assert.equal(clone.code, 0, clone.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'one\n');
    fs.writeFileSync(path.join(dir, 'b.txt'), 'two\n');
    assert.equal((await runGit(['add', '.'], dir)).code, 0);
    assert.equal((await runGit(['commit', '-m', 'add b'], dir)).code, 0);
    const push = await runGit(['push', 'origin', 'HEAD:main'], dir);
    assert.equal(push.code, 0, push.stderr);
    const after = await t.ok('GET', `/snippets/${created.id}`, null, undefined, 200);
    assert.deepEqual(
      after.files.map((f: { path: string }) => f.path),
      ['a.txt', 'b.txt'],
    );
    const raw = await t.expect('GET', `/snippets/${created.id}/files/main/b.txt/raw`, null, undefined, 200);
    assert.equal(raw.body, 'two\n');
    const fsck = await runGit(['fsck', '--strict'], dir);
    assert.equal(fsck.code, 0, fsck.stderr);

    const other = path.join(work, 'bob');
    assert.equal((await runGit(['clone', cloneUrl(bob.token, created.id), other])).code, 0);
    fs.writeFileSync(path.join(other, 'c.txt'), 'three\n');
    await runGit(['add', '.'], other);
    await runGit(['commit', '-m', 'add c'], other);
    const refused = await runGit(['push', 'origin', 'HEAD:main'], other);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /You are not allowed to update this snippet\./);
    const unchanged = await t.ok('GET', `/snippets/${created.id}`, null, undefined, 200);
    assert.equal(unchanged.files.length, 2);
  });

  it('answers a repeated service as the last one, both in who may ask and in what git serves', async () => {
    const created = await alicesSnippet('asked twice', 'public');
    const refs = (token: string, query: string) =>
      fetch(`http://${host}/snippets/${created.id}.git/info/refs?${query}`, {
        headers: { authorization: `Basic ${Buffer.from(`bob:${token}`).toString('base64')}` },
      });
    const push = 'service=git-receive-pack';
    const fetchToo = 'service=git-upload-pack';
    // Bob may read, not push: the push's advertisement is refused however the service is repeated.
    assert.equal((await refs(bob.token, push)).status, 403);
    assert.equal((await refs(bob.token, `${fetchToo}&${push}`)).status, 403);
    // Asked as a fetch last, it is a fetch's advertisement, not a push's.
    const read = await refs(bob.token, `${push}&${fetchToo}`);
    assert.equal(read.status, 200);
    assert.match(await read.text(), /^001e# service=git-upload-pack\n/);
    // The author may push, asked either way.
    const author = await refs(alice.token, `${fetchToo}&${push}`);
    assert.equal(author.status, 200);
    assert.match(await author.text(), /^001f# service=git-receive-pack\n/);
  });

  it('hides a private one from everyone but its author', async () => {
    const created = await alicesSnippet('secret', 'private');
    const hidden = await runGit(['clone', cloneUrl(bob.token, created.id), path.join(work, 'hidden')]);
    assert.notEqual(hidden.code, 0);
    assert.match(hidden.stderr, /could not be found or you don't have permission to view it/);
    const anonymous = await runGit(['clone', cloneUrl(null, created.id), path.join(work, 'anonymous')]);
    assert.notEqual(anonymous.code, 0);
    assert.match(anonymous.stderr, /Authentication failed|could not read Username/);
    assert.equal((await runGit(['clone', cloneUrl(alice.token, created.id), path.join(work, 'own')])).code, 0);
  });
});

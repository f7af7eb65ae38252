// The Ruby gitlab gem (Debian's ruby-gitlab, gem 4.17; .ci/run installs it) on personal snippets against
// snippetd on a real socket: create_user_snippet, user_snippet, user_snippets, public_snippets,
// user_snippet_raw, edit_user_snippet, delete_user_snippet and snippet_user_agent_details, each called from
// Ruby through test/clients/ruby-gem-snippets.rb. (In this gem `create_snippet` and `snippets` are the
// project snippet calls, and it has no call for one file's raw content.) What the gem returns is compared
// with what the HTTP API answers the same caller (the oracle), errors included: the gem sends forms
// (application/x-www-form-urlencoded, `files[][file_path]`), and its long tokens as `Authorization: Bearer`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const run = promisify(execFile);
/** Debian's interpreter, where ruby-gitlab is installed (an rbenv `ruby` may come first on the PATH). */
const RUBY = '/usr/bin/ruby';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ruby-gem-snippets.rb');

const skip = (() => {
  try {
    execFileSync(RUBY, ['-e', 'require "gitlab"'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'Debian package ruby-gitlab is not installed (apt-get install ruby-gitlab; .ci/run installs it)';
  }
})();

/** What one gem call gave its caller: `value` when it returned, `error` when it raised. */
type GemAnswer = { value?: any; error?: { class: string; status: number; body: unknown } };

describe('personal snippets through the Ruby gitlab gem', { skip }, () => {
  let t: TestApp;
  let endpoint: string;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };

  const gem = async (token: string, method: string, ...args: unknown[]): Promise<GemAnswer> => {
    const { stdout } = await run(RUBY, [SCRIPT, endpoint, token, method, ...args.map((a) => JSON.stringify(a))]);
    return JSON.parse(stdout);
  };
  /**
   * The oracle: the HTTP API on the same socket (so that its URLs name the same host), asked with the
   * PRIVATE-TOKEN header and a JSON body.
   */
  const api = async (method: string, url: string, token: string, payload?: object) => {
    const res = await fetch(`${endpoint}${url}`, {
      method,
      headers: { 'private-token': token, ...(payload && { 'content-type': 'application/json' }) },
      body: payload && JSON.stringify(payload),
    });
    const text = await res.text();
    return {
      status: res.status,
      text,
      json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  };
  /** The body of a 2xx answer of the oracle (JSON parsed, text as it is). */
  const must = async (method: string, url: string, token: string, payload?: object) => {
    const res = await api(method, url, token, payload);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
    return res.json ?? res.text;
  };
  /** The error the gem raises for what the oracle answers: its class, the status and the parsed body. */
  const gemError = async (method: string, url: string, token: string, payload?: object) => {
    const res = await api(method, url, token, payload);
    const classes: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 404: 'NotFound' };
    return { class: `Gitlab::Error::${classes[res.status]}`, status: res.status, body: res.json };
  };

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    endpoint = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v4`;
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  after(() => t.close());

  it('create_user_snippet with files and visibility; user_snippet, user_snippets, public_snippets, raw', async () => {
    const { value: created } = await gem(alice.token, 'create_user_snippet', {
      title: 'Ruby notes',
      description: 'from the gem',
      visibility: 'public',
      files: [
        { file_path: 'b.md', content: '# b\n' },
        { file_path: 'a.txt', content: 'a = 1\n' },
      ],
    });
    const shown = await must('GET', `/snippets/${created.id}`, alice.token);
    assert.deepEqual(created, shown);
    assert.deepEqual(
      [created.title, created.description, created.visibility, created.project_id],
      ['Ruby notes', 'from the gem', 'public', null],
    );
    assert.deepEqual(
      created.files.map((f: { path: string }) => f.path),
      ['a.txt', 'b.md'],
    );

    assert.deepEqual(await gem(alice.token, 'user_snippet', created.id), { value: shown });
    const own = await gem(alice.token, 'user_snippets');
    assert.deepEqual(own, { value: await must('GET', '/snippets', alice.token) });
    assert.deepEqual(
      own.value.map((s: { id: number }) => s.id),
      [created.id],
    );
    const pub = await gem(bob.token, 'public_snippets', { per_page: 100 });
    assert.deepEqual(pub, { value: await must('GET', '/snippets/public?per_page=100', bob.token) });
    assert.ok(pub.value.some((s: { id: number }) => s.id === created.id));
    // One snippet a page: auto_paginate follows the Link header's rel="next" to the end.
    await must('POST', '/snippets', bob.token, {
      title: 'Bob public',
      visibility: 'public',
      file_name: 'b',
      content: 'b',
    });
    const everyPage = await gem(bob.token, 'public_snippets.auto_paginate', { per_page: 1 });
    const allPublic = await must('GET', '/snippets/public?per_page=100', bob.token);
    assert.equal(allPublic.length, 2);
    assert.deepEqual(everyPage, { value: allPublic });

    const raw = await api('GET', `/snippets/${created.id}/raw`, bob.token);
    assert.equal(raw.status, 200);
    assert.deepEqual(await gem(bob.token, 'user_snippet_raw', created.id), { value: raw.text });
    assert.equal(raw.text, 'a = 1\n');
  });

  it('edit_user_snippet: title, visibility, file actions, the single-file form; user agent details; delete', async () => {
    const { id } = await must('POST', '/snippets', alice.token, {
      title: 'To edit',
      visibility: 'private',
      files: [
        { file_path: 'a.txt', content: 'a\n' },
        { file_path: 'b.md', content: '# b\n' },
        { file_path: 'gone.txt', content: 'gone\n' },
      ],
    });
    const edited = await gem(alice.token, 'edit_user_snippet', id, {
      title: 'Edited',
      visibility: 'internal',
      files: [
        { action: 'update', file_path: 'a.txt', content: 'A\n' },
        { action: 'move', previous_path: 'b.md', file_path: 'c.md' },
        { action: 'delete', file_path: 'gone.txt' },
        { action: 'create', file_path: 'd.txt', content: 'd\n' },
      ],
    });
    const shown = await must('GET', `/snippets/${id}`, alice.token);
    assert.deepEqual(edited, { value: shown });
    assert.deepEqual(
      [shown.title, shown.visibility, shown.files.map((f: { path: string }) => f.path)],
      ['Edited', 'internal', ['a.txt', 'c.md', 'd.txt']],
    );
    for (const [file, content] of [
      ['a.txt', 'A\n'],
      ['c.md', '# b\n'],
      ['d.txt', 'd\n'],
    ]) {
      const res = await api('GET', `/snippets/${id}/files/main/${file}/raw`, alice.token);
      assert.deepEqual([res.status, res.text], [200, content], file);
    }
    assert.deepEqual(await gem(alice.token, 'user_snippet_raw', id), { value: 'A\n' });

    // The legacy single-file form the gem documents: file_name and content.
    const single = await must('POST', '/snippets', alice.token, { title: 'One', file_name: 'x.rb', content: 'x\n' });
    const renamed = await gem(alice.token, 'edit_user_snippet', single.id, { file_name: 'y.rb', content: 'y\n' });
    assert.deepEqual(renamed, { value: await must('GET', `/snippets/${single.id}`, alice.token) });
    assert.deepEqual(
      [renamed.value.file_name, await must('GET', `/snippets/${single.id}/files/main/y.rb/raw`, alice.token)],
      ['y.rb', 'y\n'],
    );

    const details = await gem(ROOT_TOKEN, 'snippet_user_agent_details', id);
    assert.deepEqual(details, { value: await must('GET', `/snippets/${id}/user_agent_detail`, ROOT_TOKEN) });

    const deleted = await gem(alice.token, 'delete_user_snippet', id);
    assert.equal(deleted.error, undefined);
    assert.deepEqual(await gem(alice.token, 'user_snippet', id), {
      error: await gemError('GET', `/snippets/${id}`, alice.token),
    });
    assert.equal((await api('GET', `/snippets/${id}`, alice.token)).status, 404);
  });

  it("the errors the gem raises: another's private snippet, a missing title, content for several files, a bad token", async () => {
    const secret = await must('POST', '/snippets', bob.token, {
      title: 'Bob only',
      visibility: 'private',
      file_name: 's.txt',
      content: 'secret\n',
    });
    const notFound = await gemError('GET', `/snippets/${secret.id}`, alice.token);
    assert.deepEqual(notFound, {
      class: 'Gitlab::Error::NotFound',
      status: 404,
      body: { message: '404 Snippet Not Found' },
    });
    assert.deepEqual(await gem(alice.token, 'user_snippet', secret.id), { error: notFound });
    assert.deepEqual(await gem(alice.token, 'user_snippet_raw', secret.id), {
      error: await gemError('GET', `/snippets/${secret.id}/raw`, alice.token),
    });
    assert.deepEqual(await gem(alice.token, 'edit_user_snippet', secret.id, { title: 'Mine now' }), {
      error: await gemError('PUT', `/snippets/${secret.id}`, alice.token, { title: 'Mine now' }),
    });
    assert.deepEqual(await gem(alice.token, 'delete_user_snippet', secret.id), {
      error: await gemError('DELETE', `/snippets/${secret.id}`, alice.token),
    });
    assert.equal(await must('GET', `/snippets/${secret.id}/raw`, bob.token), 'secret\n');

    const untitled = { file_name: 'u.txt', content: 'u\n' };
    const missingTitle = await gemError('POST', '/snippets', alice.token, untitled);
    assert.deepEqual([missingTitle.status, missingTitle.body], [400, { error: 'title is missing' }]);
    assert.deepEqual(await gem(alice.token, 'create_user_snippet', untitled), { error: missingTitle });

    // The gem's single-file form on a snippet of several files (GitLab's validate_params_for_multiple_files).
    const several = await must('POST', '/snippets', alice.token, {
      title: 'Two files',
      files: [
        { file_path: '1.txt', content: '1\n' },
        { file_path: '2.txt', content: '2\n' },
      ],
    });
    const multiple = await gemError('PUT', `/snippets/${several.id}`, alice.token, { content: 'one\n' });
    assert.deepEqual(
      [multiple.status, multiple.body],
      [400, { message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' } }],
    );
    assert.deepEqual(await gem(alice.token, 'edit_user_snippet', several.id, { content: 'one\n' }), {
      error: multiple,
    });

    // The gem sends a token of 21 characters or more as `Authorization: Bearer`, a shorter one as PRIVATE-TOKEN.
    for (const bad of ['not-a-token', 'not-a-token-but-long-enough-for-bearer']) {
      const unauthorized = await gemError('GET', '/snippets', bad);
      assert.deepEqual(unauthorized, {
        class: 'Gitlab::Error::Unauthorized',
        status: 401,
        body: { message: '401 Unauthorized' },
      });
      assert.deepEqual(await gem(bad, 'user_snippets'), { error: unauthorized }, bad);
    }
  });
});

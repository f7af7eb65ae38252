// go-gitlab (Debian's golang-github-xanzy-go-gitlab-dev, 0.73.1; .ci/run installs it) on personal snippets
// against snippetd on a real socket: the Snippets service's CreateSnippet, GetSnippet, ListSnippets,
// ExploreSnippets, SnippetContent, UpdateSnippet and DeleteSnippet, each called from a Go program
// (test/clients/go-gitlab-snippets/main.go, built once, in GOPATH mode and offline). 0.73.1 has no option
// for file actions on update nor a call for one file's raw content: the program makes those through the
// client's own NewRequest and Do. What go-gitlab decodes is compared with what the HTTP API answers the same
// caller (the oracle), seen through go-gitlab's Snippet struct; errors are its *gitlab.ErrorResponse.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helper.ts';

const run = promisify(execFile);
/** Debian's Go packages: golang-go's `go`, and go-gitlab's source with its dependencies in GOPATH form. */
const GO = '/usr/bin/go';
const GOPATH = '/usr/share/gocode';
const PROGRAM = path.join(path.dirname(fileURLToPath(import.meta.url)), 'go-gitlab-snippets');

const skip =
  !fs.existsSync(GO) || !fs.existsSync(path.join(GOPATH, 'src/github.com/xanzy/go-gitlab/snippets.go'))
    ? 'Debian packages golang-go and golang-github-xanzy-go-gitlab-dev are not installed ' +
      '(apt-get install golang-go golang-github-xanzy-go-gitlab-dev; .ci/run installs them)'
    : false;

/** What one call gave the Go program: `value` when it succeeded, `error` (*gitlab.ErrorResponse) when not. */
type GoAnswer = { value?: any; error?: { status: number; message: string; body: unknown } };

/** A timestamp as an ISO string: Go writes a time.Time back in its own form (no trailing zeros). */
const iso = (time: string | null | undefined) => (time ? new Date(time).toISOString() : null);

/** go-gitlab's Snippet struct as the program prints it, timestamps in ISO form. */
function fromGo(snippet: any) {
  return {
    ...snippet,
    created_at: iso(snippet.created_at),
    updated_at: iso(snippet.updated_at),
    author: { ...snippet.author, created_at: iso(snippet.author.created_at) },
  };
}

/**
 * What go-gitlab's Snippet struct holds of the API's snippet: its fields only, a missing or null string
 * as "" (a Go string has no null), a missing timestamp as null.
 */
function asGoSees(api: any) {
  const text = (v: string | null | undefined) => v ?? '';
  return {
    id: api.id,
    title: text(api.title),
    file_name: text(api.file_name),
    description: text(api.description),
    author: {
      id: api.author.id,
      username: text(api.author.username),
      email: text(api.author.email),
      name: text(api.author.name),
      state: text(api.author.state),
      created_at: api.author.created_at ?? null,
    },
    updated_at: api.updated_at ?? null,
    created_at: api.created_at ?? null,
    web_url: text(api.web_url),
    raw_url: text(api.raw_url),
    files: api.files?.map((f: any) => ({ path: text(f.path), raw_url: text(f.raw_url) })) ?? null,
  };
}

describe('personal snippets through go-gitlab', { skip }, () => {
  let t: TestApp;
  let baseURL: string;
  let binDir: string;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };

  const goCall = async (token: string, call: string, ...args: unknown[]): Promise<GoAnswer> => {
    const argv = args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
    const { stdout } = await run(path.join(binDir, 'go-gitlab-snippets'), [baseURL, token, call, ...argv]);
    return JSON.parse(stdout);
  };
  /** The oracle: the HTTP API on the same socket (its URLs name the same host), with PRIVATE-TOKEN. */
  const api = async (method: string, url: string, token: string, payload?: object) => {
    const res = await fetch(`${baseURL}${url}`, {
      method,
      headers: { 'private-token': token, ...(payload && { 'content-type': 'application/json' }) },
      body: payload && JSON.stringify(payload),
    });
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, text, json };
  };
  const must = async (method: string, url: string, token: string, payload?: object) => {
    const res = await api(method, url, token, payload);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
    return res.json ?? res.text;
  };
  /** The error go-gitlab returns for what the oracle answers: the status and the body it parsed its Message from. */
  const goError = async (method: string, url: string, token: string, payload?: object) => {
    const res = await api(method, url, token, payload);
    return { status: res.status, body: res.json };
  };
  const withoutMessage = (answer: GoAnswer) => ({ status: answer.error?.status, body: answer.error?.body });

  before(async () => {
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'go-gitlab-snippets-'));
    await run(GO, ['build', '-o', path.join(binDir, 'go-gitlab-snippets'), '.'], {
      cwd: PROGRAM,
      // GOPATH mode on Debian's packaged sources: no module download, no network.
      env: { ...process.env, GOPATH, GO111MODULE: 'off', GOPROXY: 'off', GOFLAGS: '' },
    });
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseURL = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v4`;
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  after(async () => {
    await t?.close();
    fs.rmSync(binDir, { recursive: true, force: true });
  });

  it('CreateSnippet with files and visibility; GetSnippet, ListSnippets, ExploreSnippets, contents', async () => {
    const { value: created } = await goCall(alice.token, 'CreateSnippet', {
      title: 'Go notes',
      description: 'from go-gitlab',
      visibility: 'public',
      files: [
        { file_path: 'main.go', content: 'package main\n' },
        { file_path: 'README.md', content: '# go\n' },
      ],
    });
    const shown = await must('GET', `/snippets/${created.id}`, alice.token);
    assert.deepEqual(fromGo(created), asGoSees(shown));
    assert.deepEqual(
      [shown.title, shown.description, shown.visibility, shown.project_id],
      ['Go notes', 'from go-gitlab', 'public', null],
    );
    assert.deepEqual(
      shown.files.map((f: { path: string }) => f.path),
      ['README.md', 'main.go'],
    );

    const got = await goCall(alice.token, 'GetSnippet', created.id);
    assert.deepEqual(fromGo(got.value), asGoSees(shown));
    const own = await goCall(alice.token, 'ListSnippets', { per_page: 100 });
    assert.deepEqual(own.value.map(fromGo), (await must('GET', '/snippets?per_page=100', alice.token)).map(asGoSees));
    assert.deepEqual(
      own.value.map((s: { id: number }) => s.id),
      [created.id],
    );
    const explored = await goCall(bob.token, 'ExploreSnippets', { per_page: 100 });
    assert.deepEqual(
      explored.value.map(fromGo),
      (await must('GET', '/snippets/public?per_page=100', bob.token)).map(asGoSees),
    );
    assert.ok(explored.value.some((s: { id: number }) => s.id === created.id));

    // A page of a list: the Response's pagination fields, read from X-Total, X-Page, X-Next-Page, ...
    for (const title of ['second', 'third']) {
      await must('POST', '/snippets', alice.token, { title, file_name: 'f', content: title });
    }
    const second = await goCall(alice.token, 'ListSnippets', { per_page: 2, page: 2 });
    const oracle = await api('GET', '/snippets?per_page=2&page=2', alice.token);
    const header = (name: string) => Number(oracle.headers.get(name) || 0);
    assert.deepEqual(second, {
      value: second.value,
      page: {
        total_items: header('x-total'),
        total_pages: header('x-total-pages'),
        items_per_page: header('x-per-page'),
        current_page: header('x-page'),
        next_page: header('x-next-page'),
        previous_page: header('x-prev-page'),
      },
    });
    assert.deepEqual(second.page, {
      total_items: 3,
      total_pages: 2,
      items_per_page: 2,
      current_page: 2,
      next_page: 0,
      previous_page: 1,
    });
    assert.deepEqual(second.value.map(fromGo), oracle.json.map(asGoSees));

    const raw = await api('GET', `/snippets/${created.id}/raw`, bob.token);
    assert.deepEqual([raw.status, raw.text], [200, '# go\n']);
    assert.deepEqual(await goCall(bob.token, 'SnippetContent', created.id), { value: raw.text });
    const file = await api('GET', `/snippets/${created.id}/files/main/main.go/raw`, bob.token);
    assert.deepEqual([file.status, file.text], [200, 'package main\n']);
    assert.deepEqual(await goCall(bob.token, 'SnippetFileContent', created.id, 'main', 'main.go'), {
      value: file.text,
    });
  });

  // glab is not packaged for Debian 12 nor on the npm registry, so it cannot run here; `glab snippet create
  // --personal -t T [-d D] [-v V] file…` makes exactly this go-gitlab call (gitlab-org/cli,
  // internal/commands/snippet/create: title, a description even when empty, visibility, the files), then
  // prints the answer's web_url for the person to open.
  it("glab snippet create --personal's call: an empty description kept empty, the web_url a page", async () => {
    const { value: created } = await goCall(alice.token, 'CreateSnippet', {
      title: 'From glab',
      description: '',
      visibility: 'public',
      files: [{ file_path: 'script.py', content: 'print(1)\n' }],
    });
    const shown = await must('GET', `/snippets/${created.id}`, alice.token);
    assert.deepEqual(fromGo(created), asGoSees(shown));
    assert.deepEqual([shown.description, shown.project_id], ['', null]);
    assert.equal(created.web_url, `${baseURL.replace('/api/v4', '')}/-/snippets/${created.id}`);
    const page = await fetch(created.web_url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<h1[^>]*>From glab<\/h1>/);
  });

  it('UpdateSnippet: title, visibility, the single-file form, file actions; DeleteSnippet', async () => {
    const { value: single } = await goCall(alice.token, 'CreateSnippet', {
      title: 'One file',
      file_name: 'one.go',
      content: 'package one\n',
      visibility: 'private',
    });
    const edited = await goCall(alice.token, 'UpdateSnippet', single.id, {
      title: 'Renamed',
      visibility: 'internal',
      file_name: 'two.go',
      content: 'package two\n',
    });
    const shown = await must('GET', `/snippets/${single.id}`, alice.token);
    assert.deepEqual(fromGo(edited.value), asGoSees(shown));
    assert.deepEqual([shown.title, shown.visibility, shown.file_name], ['Renamed', 'internal', 'two.go']);
    assert.equal(await must('GET', `/snippets/${single.id}/raw`, alice.token), 'package two\n');

    const actions = await goCall(alice.token, 'UpdateSnippetFiles', single.id, {
      files: [
        { action: 'move', previous_path: 'two.go', file_path: 'cmd/two.go' },
        { action: 'create', file_path: 'go.mod', content: 'module two\n' },
      ],
    });
    const after = await must('GET', `/snippets/${single.id}`, alice.token);
    assert.deepEqual(fromGo(actions.value), asGoSees(after));
    assert.deepEqual(
      after.files.map((f: { path: string }) => f.path),
      ['cmd/two.go', 'go.mod'],
    );
    assert.deepEqual(await goCall(alice.token, 'SnippetFileContent', single.id, 'main', 'cmd/two.go'), {
      value: 'package two\n',
    });

    assert.deepEqual(await goCall(alice.token, 'DeleteSnippet', single.id), { value: 204 });
    const gone = await goCall(alice.token, 'GetSnippet', single.id);
    assert.deepEqual(withoutMessage(gone), await goError('GET', `/snippets/${single.id}`, alice.token));
    assert.equal(gone.error?.status, 404);
  });

  it("the errors go-gitlab returns: another's private snippet, a missing title, content for several files, a bad token", async () => {
    const secret = await must('POST', '/snippets', bob.token, {
      title: 'Bob only',
      visibility: 'private',
      file_name: 's.txt',
      content: 'secret\n',
    });
    const notFound = await goError('GET', `/snippets/${secret.id}`, alice.token);
    assert.deepEqual(notFound, { status: 404, body: { message: '404 Snippet Not Found' } });
    assert.deepEqual(await goCall(alice.token, 'GetSnippet', secret.id), {
      error: { ...notFound, message: '{message: 404 Snippet Not Found}' },
    });
    for (const [call, method, url, args] of [
      ['SnippetContent', 'GET', `/snippets/${secret.id}/raw`, []],
      ['SnippetFileContent', 'GET', `/snippets/${secret.id}/files/main/s.txt/raw`, ['main', 's.txt']],
      ['UpdateSnippet', 'PUT', `/snippets/${secret.id}`, [{ title: 'Mine now' }]],
      ['DeleteSnippet', 'DELETE', `/snippets/${secret.id}`, []],
    ] as const) {
      const payload = method === 'PUT' ? { title: 'Mine now' } : undefined;
      const answer = await goCall(alice.token, call, secret.id, ...args);
      assert.deepEqual(withoutMessage(answer), await goError(method, url, alice.token, payload), call);
      assert.equal(answer.error?.status, 404, call);
    }
    assert.equal(await must('GET', `/snippets/${secret.id}/raw`, bob.token), 'secret\n');

    const untitled = { file_name: 'u.txt', content: 'u\n' };
    const missingTitle = await goError('POST', '/snippets', alice.token, untitled);
    assert.deepEqual(missingTitle, { status: 400, body: { error: 'title is missing' } });
    assert.deepEqual(await goCall(alice.token, 'CreateSnippet', untitled), {
      error: { ...missingTitle, message: '{error: title is missing}' },
    });

    // UpdateSnippet's single-file form on a snippet of several files (GitLab's validate_params_for_multiple_files).
    const several = await must('POST', '/snippets', alice.token, {
      title: 'Two files',
      files: [
        { file_path: '1.go', content: 'package one\n' },
        { file_path: '2.go', content: 'package two\n' },
      ],
    });
    const multiple = await goError('PUT', `/snippets/${several.id}`, alice.token, { content: 'one\n' });
    const sentence = 'To update Snippets with multiple files, you must use the `files` parameter';
    assert.deepEqual(multiple, { status: 400, body: { message: { error: sentence } } });
    assert.deepEqual(await goCall(alice.token, 'UpdateSnippet', several.id, { content: 'one\n' }), {
      error: { ...multiple, message: `{message: {error: ${sentence}}}` },
    });

    const unauthorized = await goError('GET', '/snippets', 'not-a-token');
    assert.deepEqual(unauthorized, { status: 401, body: { message: '401 Unauthorized' } });
    assert.deepEqual(await goCall('not-a-token', 'ListSnippets', {}), {
      error: { ...unauthorized, message: '{message: 401 Unauthorized}' },
    });
  });
});

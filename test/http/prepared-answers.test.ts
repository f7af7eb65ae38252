// Kept answers (built-in templates, snippets, their raw files) are prepared once and written straight to the
// socket (src/http/prepared-answer.ts), past Fastify's onSend hooks. Over a real socket: they carry exactly the
// headers every other JSON answer carries, a Content-Length that is the body's byte length, the same
// bytes on every request, HEAD without a body, and Link URLs of the host each request named.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

/** The headers of an answer that say what it is (not when, for which request or over which connection it was sent). */
function describing(headers: http.IncomingHttpHeaders) {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, 'x-request-id': _id, ...rest } = headers;
  return rest;
}

/** Every answer carries its request's id (http/plugins/monitoring.ts), prepared or not. */
const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const PAGE_HEADERS = ['x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'x-total', 'x-total-pages', 'link'];
// `vary: Origin` on every API answer, as GitLab's Rack::Cors adds it (plugins/cors.ts).
const JSON_HEADERS = ['content-type', 'x-frame-options', 'x-content-type-options', 'content-length', 'vary'];

describe('prepared answers over a socket', () => {
  let t: TestApp;
  let id: number;

  before(async () => {
    t = await createTestApp();
    id = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'prepared', visibility: 'public' }, 201)).id;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  const urls = () => ({
    list: `/api/v4/projects/${id}/templates/licenses?per_page=5&page=2`,
    file: `/api/v4/projects/${id}/templates/dockerfiles/Node`,
    license: `/api/v4/projects/${id}/templates/licenses/mit?fullname=J%C3%BCrgen%20%C3%98st&project=Caf%C3%A9`,
    deprecatedList: '/api/v4/templates/gitignores?per_page=3',
    deprecatedFile: '/api/v4/templates/gitignores/Ruby',
    deprecatedLicense: '/api/v4/templates/licenses/mit',
  });

  it('carry exactly the JSON headers (and a list page its pagination headers), with the byte length', async () => {
    // What Fastify and our hooks send with any other JSON answer: a header added there must be added here.
    const ordinary = await t.socket('GET', '/api/v4/version');
    assert.deepEqual(Object.keys(describing(ordinary.headers)).sort(), [...JSON_HEADERS].sort());
    assert.match(String(ordinary.headers['x-request-id']), REQUEST_ID);
    for (const [name, url] of Object.entries(urls())) {
      const res = await t.socket('GET', url);
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      const expected = [...JSON_HEADERS, ...(name.endsWith('ist') ? PAGE_HEADERS : [])].sort();
      assert.deepEqual(Object.keys(describing(res.headers)).sort(), expected, name);
      assert.match(String(res.headers['x-request-id']), REQUEST_ID, name);
      assert.equal(res.headers['content-type'], 'application/json', name);
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN', name);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), name);
      JSON.parse(res.body);
    }
  });

  it('fill a license for each request: non-ASCII values counted in bytes', async () => {
    const res = await t.socket('GET', urls().license);
    const content: string = JSON.parse(res.body).content;
    assert.ok(content.includes(`Copyright (c) ${new Date().getUTCFullYear()} Jürgen Øst`), content.slice(0, 120));
    assert.ok(Buffer.byteLength(res.body) > res.body.length);
  });

  it('are the same bytes on every request', async () => {
    for (const [name, url] of Object.entries(urls())) {
      const [a, b] = [await t.socket('GET', url), await t.socket('GET', url)];
      assert.equal(a.body, b.body, name);
      assert.deepEqual(describing(a.headers), describing(b.headers), name);
    }
  });

  it('answer HEAD with the same headers and no body', async () => {
    for (const [name, url] of Object.entries(urls())) {
      const [get, head] = [await t.socket('GET', url), await t.socket('HEAD', url)];
      assert.equal(head.statusCode, 200, name);
      assert.equal(head.body, '', name);
      assert.deepEqual(describing(head.headers), describing(get.headers), name);
    }
  });

  it("link to the host each request named (a prepared page is never another host's)", async () => {
    const url = `/api/v4/projects/${id}/templates/gitignores?per_page=2`;
    const one = await t.socket('GET', url, { host: 'one.example' });
    const two = await t.socket('GET', url, { host: 'two.example:8443' });
    assert.equal(one.body, two.body);
    assert.match(String(one.headers.link), /^<http:\/\/one\.example\/api\/v4\/projects\/\d+\/templates\/gitignores\?/);
    assert.match(
      String(two.headers.link),
      /^<http:\/\/two\.example:8443\/api\/v4\/projects\/\d+\/templates\/gitignores\?/,
    );
    assert.doesNotMatch(String(two.headers.link), /one\.example/);
  });

  it("are never another URL's answer, whatever the Host header holds", async () => {
    // A Host ending in a path, joined naively to the URL, would make this key equal to the next one's.
    for (const prefix of ['/api/v4/templates/gitignores', `/api/v4/projects/${id}/templates/gitignores`]) {
      const node = await t.socket('GET', `${prefix}/Node`, { host: `h${prefix}/Ruby?x=` });
      assert.equal(JSON.parse(node.body).name, 'Node');
      const ruby = await t.socket('GET', `${prefix}/Ruby?x=${prefix}/Node`, { host: 'h' });
      assert.equal(ruby.statusCode, 200, ruby.body);
      assert.equal(JSON.parse(ruby.body).name, 'Ruby', prefix);
    }
  });

  it('answer very long URLs without keeping them', async () => {
    const url = `/api/v4/projects/${id}/templates/licenses?per_page=2&x=${'a'.repeat(3000)}`;
    for (let i = 0; i < 2; i++) {
      const res = await t.socket('GET', url);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(JSON.parse(res.body).length, 2);
      assert.match(String(res.headers.link), /x=a{3000}/);
    }
  });

  it('are not kept for URLs with a token, and still answer them', async () => {
    const url = `/api/v4/projects/${id}/templates/licenses?per_page=2&private_token=${ROOT_TOKEN}`;
    const res = await t.socket('GET', url);
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(String(res.headers.link), /private_token|root-token/);
  });

  it("a snippet's raw file, prepared, carries exactly the headers a project file's raw answer gets through Fastify", async () => {
    const files = [
      { file_path: 'page.html', content: '<html><body><script>alert(1)</script></body></html>\n' },
      { file_path: 'pic.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"></svg>\n' },
      { file_path: 'notes-é.txt', content: 'plain\n' },
    ];
    for (const file of files)
      await t.ok(
        'POST',
        `/projects/${id}/repository/files/${encodeURIComponent(file.file_path)}`,
        ROOT_TOKEN,
        { branch: 'main', content: file.content, commit_message: file.file_path },
        201,
      );
    const snippet = await t.ok(
      'POST',
      `/projects/${id}/snippets`,
      ROOT_TOKEN,
      { title: 'raw headers', visibility: 'public', files },
      201,
    );
    const token = { 'private-token': ROOT_TOKEN };
    // A repository file's answer also names its blob and commits (GitLab's X-Gitlab-* headers); a snippet's not.
    const withoutGitlab = (headers: http.IncomingHttpHeaders) =>
      Object.fromEntries(Object.entries(describing(headers)).filter(([name]) => !name.startsWith('x-gitlab-')));
    for (const file of files) {
      const path = encodeURIComponent(file.file_path);
      const ordinary = await t.socket('GET', `/api/v4/projects/${id}/repository/files/${path}/raw?ref=main`, token);
      const snippetRaw = `/api/v4/projects/${id}/snippets/${snippet.id}/files/main/${path}/raw`;
      for (let ask = 0; ask < 2; ask++) {
        const prepared = await t.socket('GET', snippetRaw, token);
        assert.equal(prepared.statusCode, 200, prepared.body);
        assert.equal(prepared.body, file.content);
        assert.deepEqual(
          describing(prepared.headers),
          withoutGitlab(ordinary.headers),
          `${file.file_path}, ask ${ask}`,
        );
      }
    }
  });
});

// Where parameters come from (docs/gitlab-compatibility.md#parameters and #d12): query string, JSON, form-urlencoded
// with Rack arrays, multipart; DELETE with an empty or '{}' JSON body; malformed bodies; unknown parameters.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, MULTIPART_BOUNDARY, multipart, ROOT_TOKEN, type TestApp } from '../helper.ts';

describe('request bodies and parameter sources', () => {
  let t: TestApp;
  let alice: { id: number; username: string; token: string };
  let tokensUrl: string;

  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    tokensUrl = `/api/v4/users/${alice.id}/personal_access_tokens`;
  });
  after(() => t.close());

  /** Creates a token (as root) that can then be revoked; returns its id. */
  async function freshTokenId(): Promise<number> {
    const res = await t.request({ method: 'POST', url: tokensUrl, payload: { name: 'to-revoke', scopes: ['api'] } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json.id;
  }

  async function assertRevoked(id: number): Promise<void> {
    const res = await t.request({ method: 'GET', url: `/api/v4/personal_access_tokens/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json.revoked, true);
    assert.equal(res.json.active, false);
  }

  it('reads parameters from the query string, with Rack arrays', async () => {
    const res = await t.request({
      method: 'POST',
      url: `${tokensUrl}?name=from-query&scopes[]=api&scopes%5B%5D=read_api&expires_at=2099-01-31`,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.json.name, 'from-query');
    assert.deepEqual(res.json.scopes, ['api', 'read_api']);
    assert.equal(res.json.expires_at, '2099-01-31');
    assert.equal(res.json.user_id, alice.id);
  });

  it('reads parameters from a JSON body', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      payload: { name: 'from-json', scopes: ['api', 'read_user'], expires_at: '2099-02-28' },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'from-json');
    assert.deepEqual(res.json.scopes, ['api', 'read_user']);
    assert.equal(res.json.expires_at, '2099-02-28');
  });

  it('reads a JSON body sent with a charset parameter', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ name: 'json-charset', scopes: ['read_api'] }),
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'json-charset');
    assert.deepEqual(res.json.scopes, ['read_api']);
  });

  it('reads an application/x-www-form-urlencoded body with Rack arrays, + and percent decoding', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=my+form%21+%C3%A9&scopes[]=api&scopes[]=read_api&expires_at=2099-03-31',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'my form! é');
    assert.deepEqual(res.json.scopes, ['api', 'read_api']);
    assert.equal(res.json.expires_at, '2099-03-31');
  });

  it('reads a form body over 1 MiB (parsed in the worker thread) as a small one', async () => {
    const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'form-bodies' }, 201);
    const content = `${'é+&=%'.repeat(300_000)}\n`;
    const res = await t.request({
      method: 'POST',
      url: `/api/v4/projects/${project.id}/snippets`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `title=big+form&files[][file_path]=a.txt&files[][content]=${encodeURIComponent(content)}`,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.title, 'big form');
    const raw = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/snippets/${res.json.id}/raw` });
    assert.equal(raw.body, content);
  });

  it('reads a form body with percent-encoded brackets and a charset parameter', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      payload: 'name=encoded&scopes%5B%5D=read_user&scopes%5B%5D=read_repository',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'encoded');
    assert.deepEqual(res.json.scopes, ['read_user', 'read_repository']);
  });

  it('reads a multipart/form-data body, with Rack arrays', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` },
      payload: multipart([
        ['name', 'multi part ✓'],
        ['scopes[]', 'api'],
        ['scopes[]', 'read_api'],
        ['expires_at', '2099-04-30'],
      ]),
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'multi part ✓');
    assert.deepEqual(res.json.scopes, ['api', 'read_api']);
    assert.equal(res.json.expires_at, '2099-04-30');
  });

  it('reads multipart file parts in their place among the fields, whichever comes first', async () => {
    // A file part's value is read to its end after the fields that follow it may have been parsed.
    const field = (name: string, value: string, file = false) =>
      `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"` +
      `${file ? '; filename="f.txt"\r\nContent-Type: text/plain' : ''}\r\n\r\n${value}\r\n`;
    const res = await t.request({
      method: 'POST',
      url: '/api/v4/snippets',
      headers: { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`, 'private-token': ROOT_TOKEN },
      payload: [
        field('title', 'parts'),
        field('files[][content]', 'first ✓\n', true),
        field('files[][file_path]', 'first.txt'),
        field('files[][content]', 'second\n', true),
        field('files[][file_path]', 'second.txt'),
        `--${MULTIPART_BOUNDARY}--\r\n`,
      ].join(''),
    });
    assert.equal(res.statusCode, 201, res.body);
    for (const [path, content] of [
      ['first.txt', 'first ✓\n'],
      ['second.txt', 'second\n'],
    ]) {
      const raw = await t.request({
        method: 'GET',
        url: `/api/v4/snippets/${res.json.id}/files/main/${path}/raw`,
        headers: { 'private-token': ROOT_TOKEN },
      });
      assert.equal(raw.statusCode, 200, path);
      assert.equal(raw.body, content, path);
    }
  });

  it('merges the query string with the body', async () => {
    const res = await t.request({ method: 'POST', url: `${tokensUrl}?name=half-query`, payload: { scopes: ['api'] } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'half-query');
    assert.deepEqual(res.json.scopes, ['api']);
  });

  it('validates a form body like any other: a missing parameter is 400 "<p> is missing"', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'scopes[]=api',
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'name is missing' });
  });

  it('ignores unknown parameters', async () => {
    const res = await t.request({
      method: 'POST',
      url: `${tokensUrl}?whatever=1`,
      payload: { name: 'extra', scopes: ['api'], bogus: 'x', nested: { a: 1 } },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json.name, 'extra');
    assert.equal('bogus' in res.json, false);
    assert.equal('nested' in res.json, false);
    assert.equal('whatever' in res.json, false);
    const me = await t.request({ method: 'GET', url: '/api/v4/user?unknown_param=1&another[]=2' });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json.username, 'root');
  });

  it('accepts DELETE with Content-Type: application/json and an empty body', async () => {
    const id = await freshTokenId();
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v4/personal_access_tokens/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    await assertRevoked(id);
  });

  it('accepts DELETE with Content-Type: application/json and a {} body', async () => {
    const id = await freshTokenId();
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v4/personal_access_tokens/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    await assertRevoked(id);
  });

  it('answers malformed JSON with 400 and an {"error": ...} body, never 500', async () => {
    for (const payload of ['{"name": ', '{name: "x"}', '[1,', 'not json at all']) {
      const res = await t.request({
        method: 'POST',
        url: tokensUrl,
        headers: { 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.deepEqual(Object.keys(res.json), ['error']);
      assert.equal(typeof res.json.error, 'string');
      assert.notEqual(res.json.error, '');
    }
    const id = await freshTokenId();
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v4/personal_access_tokens/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    assert.equal(del.statusCode, 400, del.body);
    assert.deepEqual(Object.keys(del.json), ['error']);
  });

  it('answers a malformed multipart body with 400 and an {"error": ...} body, never 500', async () => {
    const res = await t.request({
      method: 'POST',
      url: tokensUrl,
      headers: { 'content-type': 'multipart/form-data' },
      payload: multipart([['name', 'x']]),
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(Object.keys(res.json), ['error']);
    assert.equal(typeof res.json.error, 'string');
  });
});

// Where parameters come from (docs/gitlab-compatibility.md#parameters and #d12): query string, JSON, form-urlencoded
// with Rack arrays, multipart; DELETE with an empty or '{}' JSON body; malformed bodies; unknown parameters.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
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

  describe("a large body's long texts (kept as bytes from the parse worker)", () => {
    // 80 parameters nobody reads of 16 Ki characters each, before the others: the body is over 1 MiB, so it is
    // parsed in the worker thread, and past its first 1 Mi characters every string over 128 comes back as bytes.
    const padding = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`pad${i}`, 'p'.repeat(16 * 1024)]));
    const send = (url: string, params: object, large: boolean, method: 'POST' | 'PUT' = 'POST') =>
      t.request({
        method,
        url: `/api/v4${url}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(large ? { ...padding, ...params } : params),
      });
    /** What a client sees of the snippet `res` made: its fields and each file's bytes. */
    const seen = async (res: { statusCode: number; body: string; json: any }) => {
      if (res.statusCode !== 201) return [res.statusCode, res.body];
      const files = [];
      for (const f of res.json.files)
        files.push((await t.request({ method: 'GET', url: new URL(f.raw_url).pathname })).rawPayload.toString('hex'));
      return [res.statusCode, res.json.title, res.json.description, files];
    };
    const long = (text: string, chars: number) => text.repeat(Math.ceil(chars / text.length)).slice(0, chars);
    const WHITESPACE =
      '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

    it('are read as the same parameters in a small body', async () => {
      const cases: Record<string, object> = {
        'long title, description and content': {
          title: long('Äpfel ', 200),
          description: long('description ✓ ', 300),
          files: [{ file_path: 'a.txt', content: long('line é ✓ 𝄞\n', 1000) }],
        },
        'a lone surrogate': { title: 'x', files: [{ file_path: 'a.txt', content: `${long('a', 200)}\ud800z` }] },
        'a title too long': { title: long('t', 300), files: [{ file_path: 'a.txt', content: 'a' }] },
        'a blank content': { title: 'x', files: [{ file_path: 'a.txt', content: long(' \t\u3000\u00a0\n', 200) }] },
        'a content blank but for its end': {
          title: 'x',
          files: [{ file_path: 'a.txt', content: `${long('\u3000 ', 200)}x` }],
        },
        'a NUL in a long title': { title: `${long('t', 200)}\u0000`, files: [{ file_path: 'a.txt', content: 'a' }] },
        'a NUL in a long content': { title: 'x', files: [{ file_path: 'a.txt', content: `${long('c', 200)}\u0000` }] },
        'the legacy pair': { title: 'x', file_name: long('n', 200), content: long('legacy ', 300) },
        // Every character String#trim removes, then some it keeps (U+180E and U+200B are no whitespace there).
        'all whitespace': { title: 'x', files: [{ file_path: 'a.txt', content: long(WHITESPACE, 200) }] },
        ...Object.fromEntries(
          ['\u180e', '\u200b', '\u0085', '\u00a1', '\u2030', '\u3001', '\ufeffx'].map((kept) => [
            `whitespace and U+${kept.codePointAt(0)!.toString(16)}`,
            { title: 'x', files: [{ file_path: 'a.txt', content: `${long(WHITESPACE, 200)}${kept}` }] },
          ]),
        ),
        'a long file in place of a hash': { title: 'x', files: [long('f', 200)] },
        'a long sudo': { sudo: long('u', 200), title: 'x', files: [{ file_path: 'a.txt', content: 'a' }] },
      };
      for (const [name, params] of Object.entries(cases)) {
        const small = await seen(await send('/snippets', params, false));
        const large = await seen(await send('/snippets', params, true));
        assert.deepEqual(large, small, name);
      }
      // A body that is one JSON string (no parameters at all), small and over 1 MiB.
      const bare = async (text: string) => {
        const res = await t.request({
          method: 'POST',
          url: '/api/v4/snippets',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(text),
        });
        return [res.statusCode, res.body];
      };
      assert.deepEqual(await bare(long('s', 2 * 1024 * 1024)), await bare('s'));
    });

    it('keep a content of 64 Ki characters and more as its bytes, in JSON and form bodies', async () => {
      const content = long('ünïcödé ✓ 𝄞 text\n', 400_000);
      const bytes = Buffer.from(content);
      const json = await send('/snippets', { title: 'large', files: [{ file_path: 'a.txt', content }] }, true);
      assert.equal(json.statusCode, 201, json.body);
      const form = await t.request({
        method: 'POST',
        url: '/api/v4/snippets',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `title=large&files[][file_path]=a.txt&files[][content]=${encodeURIComponent(content)}`,
      });
      assert.equal(form.statusCode, 201, form.body);
      for (const { id } of [json.json, form.json]) {
        const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${id}/raw` });
        assert.ok(raw.rawPayload.equals(bytes), `snippet ${id}`);
      }
      const update = { files: [{ action: 'update', file_path: 'a.txt', content: `${content}more` }] };
      const updated = await send(`/snippets/${json.json.id}`, update, true, 'PUT');
      assert.equal(updated.statusCode, 200, updated.body);
      const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${json.json.id}/raw` });
      assert.ok(raw.rawPayload.equals(Buffer.from(`${content}more`)));
      const blank = await send(
        '/snippets',
        { title: 'x', files: [{ file_path: 'a.txt', content: long(' \u3000', 70_000) }] },
        true,
      );
      assert.deepEqual([blank.statusCode, blank.json], [400, { error: 'files[0][content] is empty' }]);
    });

    it('keep a multipart file part over 64 KiB as its bytes, invalid UTF-8 replaced as a decoder does', async () => {
      const valid = Buffer.from(long('ünïcödé ✓ 𝄞 text\n', 100_000));
      // Cut sequences, a lone continuation byte, an overlong form and bytes UTF-8 never has.
      const invalid = Buffer.concat([
        valid.subarray(0, 70_000),
        Buffer.from([0xe2, 0x9c, 0x0a, 0x80, 0xc0, 0xaf, 0xff]),
      ]);
      const filePart = (name: string, bytes: Buffer) => [
        Buffer.from(
          `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="a.txt"\r\n` +
            'Content-Type: text/plain\r\n\r\n',
        ),
        bytes,
        Buffer.from('\r\n'),
      ];
      // Three large parts one after another share the memory reserved for the body.
      const three = [0, 1, 2].map((i) => [
        ...filePart('files[][content]', Buffer.from(long(`part ${i} ✓\n`, 80_000 + i))),
        Buffer.from(multipart([['files[][file_path]', `${i}.txt`]]).replace(`--${MULTIPART_BOUNDARY}--\r\n`, '')),
      ]);
      const res = await t.request({
        method: 'POST',
        url: '/api/v4/snippets',
        headers: { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` },
        payload: Buffer.concat([
          Buffer.from(multipart([['title', 'three']]).replace(`--${MULTIPART_BOUNDARY}--\r\n`, '')),
          ...three.flat(),
          Buffer.from(`--${MULTIPART_BOUNDARY}--\r\n`),
        ]),
      });
      assert.equal(res.statusCode, 201, res.body);
      for (const i of [0, 1, 2]) {
        const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${res.json.id}/files/main/${i}.txt/raw` });
        assert.equal(raw.body, long(`part ${i} ✓\n`, 80_000 + i), `part ${i}`);
      }
      // A field (no file name) is read the same way.
      const field = await t.request({
        method: 'POST',
        url: '/api/v4/snippets',
        headers: { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` },
        payload: multipart([
          ['title', 'field'],
          ['files[][file_path]', 'a.txt'],
          ['files[][content]', valid.toString()],
        ]),
      });
      assert.equal(field.statusCode, 201, field.body);
      const fieldRaw = await t.request({ method: 'GET', url: `/api/v4/snippets/${field.json.id}/raw` });
      assert.ok(fieldRaw.rawPayload.equals(valid));
      for (const [bytes, chunked] of [
        [valid, false],
        [invalid, false],
        [invalid, true],
      ] as const) {
        const body = Buffer.concat([
          Buffer.from(multipart([['title', 'parts']]).replace(`--${MULTIPART_BOUNDARY}--\r\n`, '')),
          ...filePart('files[][content]', bytes),
          Buffer.from(multipart([['files[][file_path]', 'a.txt']])),
        ]);
        const res = await t.request({
          method: 'POST',
          url: '/api/v4/snippets',
          headers: { 'content-type': `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` },
          // A stream has no declared length: its part is kept as chunks and joined at its end.
          payload: chunked ? Readable.from([body.subarray(0, 50_000), body.subarray(50_000)]) : body,
        });
        assert.equal(res.statusCode, 201, res.body);
        const raw = await t.request({ method: 'GET', url: `/api/v4/snippets/${res.json.id}/raw` });
        assert.ok(
          raw.rawPayload.equals(Buffer.from(bytes.toString('utf8'))),
          `${bytes.length} bytes, chunked ${chunked}`,
        );
      }
    });

    it('write a repository file of 64 Ki characters and more, as text or base64', async () => {
      const project = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'large-texts' }, 201);
      const text = long('text ✓ 𝄞\n', 100_000);
      const binary = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 31) % 256));
      const writes: [string, object, Buffer][] = [
        ['text.txt', { content: text }, Buffer.from(text)],
        ['binary.bin', { content: binary.toString('base64'), encoding: 'base64' }, binary],
      ];
      for (const [path, params, bytes] of writes) {
        const url = `/projects/${project.id}/repository/files/${path}`;
        const res = await send(url, { branch: 'main', commit_message: long('message ', 200), ...params }, true);
        assert.equal(res.statusCode, 201, res.body);
        const raw = await t.request({ method: 'GET', url: `/api/v4${url}/raw` });
        assert.ok(raw.rawPayload.equals(bytes), path);
      }
    });
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

// JSON answers compressed (issue 28; http/plugins/compression.ts): over a real socket, a JSON answer past the
// threshold comes in brotli or gzip as Accept-Encoding asks, q-values and identity honoured, with Vary and the
// compressed length, and decodes to exactly the answer sent to a client that accepts no encoding. Small
// answers, raw files and git answers go as they are; prepared (kept) answers follow the same rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { createTestApp, type TestApp } from '../helper.ts';

interface Raw {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync } as const;

/** The headers that describe an answer, not its sending (date, connection, request id). */
function describing(headers: http.IncomingHttpHeaders) {
  const { date: _d, connection: _c, 'keep-alive': _k, 'x-request-id': _id, ...rest } = headers;
  return rest;
}

describe('compressed JSON answers', () => {
  let t: TestApp;
  let user: { id: number; token: string };
  let snippetId: number;

  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    new Promise<Raw>((resolve, reject) => {
      const { port } = t.app.server.address() as AddressInfo;
      const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  const get = (path: string, acceptEncoding?: string, method = 'GET') =>
    send(method, path, {
      'private-token': user.token,
      ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
    });

  /** The answer for `acceptEncoding` is `identity`'s, in `encoding`: every header alike but its encoding's own. */
  function assertEncoded(res: Raw, identity: Raw, encoding: 'br' | 'gzip', what: string) {
    assert.equal(res.statusCode, 200, what);
    assert.equal(res.headers['content-encoding'], encoding, what);
    assert.equal(res.headers.vary, 'Origin, accept-encoding', what);
    assert.equal(Number(res.headers['content-length']), res.bytes.length, what);
    assert.ok(res.bytes.length * 2 < identity.bytes.length, `${what}: ${res.bytes.length} of ${identity.bytes.length}`);
    assert.deepEqual(decode[encoding](res.bytes), identity.bytes, what);
    const { 'content-encoding': _e, vary: _v, 'content-length': _l, ...rest } = describing(res.headers);
    const { 'content-length': _il, vary: _iv, ...identityRest } = describing(identity.headers);
    assert.deepEqual(rest, identityRest, what);
  }

  function assertIdentity(res: Raw, identity: Raw, what: string) {
    assert.equal(res.statusCode, identity.statusCode, what);
    assert.deepEqual(describing(res.headers), describing(identity.headers), what);
    assert.deepEqual(res.bytes, identity.bytes, what);
  }

  before(async () => {
    t = await createTestApp();
    user = await t.user('compressed');
    for (let i = 0; i < 20; i++) {
      const created = await t.ok(
        'POST',
        '/snippets',
        user.token,
        { title: `snippet ${i}`, visibility: 'public', files: [{ file_path: 'a.txt', content: `text ${i}\n` }] },
        201,
      );
      snippetId = created.id;
    }
    await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('a list of 20 comes in the encoding Accept-Encoding prefers, and decodes to the plain answer', async () => {
    const url = '/api/v4/snippets?per_page=20';
    const identity = await get(url);
    assert.equal(identity.statusCode, 200);
    assert.equal(identity.headers['content-encoding'], undefined);
    // Every API answer varies by Origin (plugins/cors.ts).
    assert.equal(identity.headers.vary, 'Origin');
    assert.equal(identity.headers['content-type'], 'application/json');
    assert.equal(Number(identity.headers['content-length']), identity.bytes.length);
    assert.equal(JSON.parse(identity.bytes.toString()).length, 20);
    assert.equal(identity.headers['x-total'], '20');
    for (const [accepted, encoding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
      ['br;q=0.5, gzip;q=0.8', 'gzip'],
      ['gzip;q=0.5, br', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['*', 'br'],
      ['identity;q=0.5, gzip', 'gzip'],
    ] as const)
      assertEncoded(await get(url, accepted), identity, encoding, accepted);
    for (const accepted of ['identity', 'gzip;q=0.5, identity', 'br;q=0, gzip;q=0', 'deflate', 'compress', ''])
      assertIdentity(await get(url, accepted), identity, accepted);
  });

  it('HEAD says what GET would send: the same encoding and length, no body', async () => {
    const url = '/api/v4/snippets?per_page=20';
    const full = await get(url, 'gzip');
    const head = await get(url, 'gzip', 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.bytes.length, 0);
    assert.equal(head.headers['content-encoding'], 'gzip');
    assert.equal(head.headers['content-length'], full.headers['content-length']);
  });

  it('small answers, raw files and git go as they are', async () => {
    // One snippet, and a list of 3.4 KB: under the threshold (4 KB).
    for (const url of [`/api/v4/snippets/${snippetId}`, '/api/v4/templates/gitignores?per_page=100']) {
      const plain = await get(url);
      assert.equal(plain.statusCode, 200, url);
      assert.ok(plain.bytes.length < 4096, `${url}: ${plain.bytes.length}`);
      assertIdentity(await get(url, 'gzip, br'), plain, url);
    }
    const raw = await get(`/api/v4/snippets/${snippetId}/raw`, 'gzip, br');
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.equal(raw.bytes.toString(), 'text 19\n');
    const webRaw = await send('GET', `/-/snippets/${snippetId}/raw/main/a.txt`, { 'accept-encoding': 'gzip, br' });
    assert.equal(webRaw.statusCode, 200);
    assert.equal(webRaw.headers['content-encoding'], undefined);
    assert.equal(webRaw.bytes.toString(), 'text 19\n');
    const unchanged = await send('GET', `/-/snippets/${snippetId}/raw/main/a.txt`, {
      'accept-encoding': 'gzip, br',
      'if-none-match': String(webRaw.headers.etag),
    });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.bytes.length, 0);
    const refs = await send('GET', `/snippets/${snippetId}.git/info/refs?service=git-upload-pack`, {
      'accept-encoding': 'gzip, br',
    });
    assert.equal(refs.statusCode, 200);
    assert.equal(refs.headers['content-type'], 'application/x-git-upload-pack-advertisement');
    assert.equal(refs.headers['content-encoding'], undefined);
  });

  it('prepared template answers are compressed the same way, each encoding kept apart', async () => {
    // 12 KB, and 420 KB (compressed off the event loop).
    for (const url of ['/api/v4/templates/licenses/apache-2.0', '/api/v4/templates/licenses?per_page=100']) {
      const identity = await get(url);
      assert.equal(identity.statusCode, 200, url);
      assert.ok(identity.bytes.length >= 4096, `${url}: ${identity.bytes.length}`);
      for (const round of [1, 2])
        for (const [accepted, encoding] of [
          ['gzip, deflate, br', 'br'],
          ['gzip', 'gzip'],
        ] as const)
          assertEncoded(await get(url, accepted), identity, encoding, `${url} ${accepted} (${round})`);
      assertIdentity(await get(url), identity, `${url} again`);
      assertIdentity(await get(url, 'identity'), identity, `${url} identity`);
      const head = await get(url, 'gzip', 'HEAD');
      assert.equal(head.headers['content-encoding'], 'gzip', url);
      assert.equal(head.bytes.length, 0, url);
    }
  });
});

// The code editor's script (src/http/pages/editor.ts): editor.js and every chunk it imports, compressed,
// revalidated by ETag, the chunks (named by their hash) kept; nothing else is served under its path. Run
// from the sources, as here, the route bundles it on first request from the build's own options. The forms
// load it with their nonce, which their policy alone also allows for styles.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const EDITOR = '/-/snippetd/editor';

describe("the code editor's script", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.request({ method: 'GET', url, token: null, headers });

  /** A Content-Security-Policy header by directive: { 'style-src': "'self'", … }. */
  const directives = (policy: unknown) =>
    Object.fromEntries(
      String(policy)
        .split('; ')
        .map((d) => [d.split(' ')[0], d.slice(d.indexOf(' ') + 1)]),
    );

  /** The chunks a script imports, statically (`from"./chunk-….js"`) or on demand (`import("./chunk-….js")`). */
  const importsOf = (script: string) => [...script.matchAll(/["'`]\.\/(chunk-[A-Z0-9]+\.js)["'`]/g)].map((m) => m[1]);

  it('serves editor.js, revalidated on every use, and every chunk it reaches, kept a year', async () => {
    const entry = await get(`${EDITOR}/editor.js`);
    assert.equal(entry.statusCode, 200);
    assert.equal(entry.headers['content-type'], 'text/javascript; charset=utf-8');
    // Revalidated on every use: an editor.js cached from before an upgrade would import chunks that are gone.
    assert.equal(entry.headers['cache-control'], 'public, no-cache');
    assert.match(String(entry.headers.etag), /^"[0-9a-f]{32}"$/);
    // It mounts CodeMirror over the forms' textareas with the page's nonce for its styles.
    assert.match(entry.body, /textarea\.code-input/);
    assert.match(entry.body, /editor\/editor\.js/);

    const seen = new Set<string>();
    const queue = importsOf(entry.body);
    assert.ok(queue.length > 0, 'editor.js imports no chunk');
    while (queue.length) {
      const name = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const chunk = await get(`${EDITOR}/${name}`);
      assert.equal(chunk.statusCode, 200, name);
      assert.equal(chunk.headers['content-type'], 'text/javascript; charset=utf-8', name);
      assert.equal(chunk.headers['cache-control'], 'public, max-age=31536000, immutable', name);
      queue.push(...importsOf(chunk.body));
    }
    // The languages are chunks of their own, loaded when a file name asks for one: editor.js with what it
    // imports at once stays a fraction of the whole.
    assert.ok(seen.size > 10, `${seen.size} chunks`);
  });

  it('answers 304 to the ETag it gave, and compresses as the client accepts', async () => {
    const entry = await get(`${EDITOR}/editor.js`);
    const etag = String(entry.headers.etag);
    const again = await get(`${EDITOR}/editor.js`, { 'if-none-match': `"other", ${etag}` });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await get(`${EDITOR}/editor.js`, { 'if-none-match': '"other"' })).statusCode, 200);

    const br = await get(`${EDITOR}/editor.js`, { 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.equal(zlib.brotliDecompressSync(br.rawPayload).toString('utf8'), entry.body);
    assert.ok(
      br.rawPayload.length * 2 < entry.rawPayload.length,
      `${br.rawPayload.length} of ${entry.rawPayload.length}`,
    );
  });

  it('the snippet forms load it with their nonce, allowed for styles on those pages only', async () => {
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'writer',
      email: 'writer@example.com',
      name: 'Writer',
      password: 'correct horse battery',
    });
    const cookie = await signInCookie(t, 'writer', 'correct horse battery');
    const snippet = await t.must('POST', '/snippets', ROOT_TOKEN, {
      title: 'Public',
      visibility: 'public',
      files: [{ file_path: 'a.rb', content: 'puts 1\n' }],
    });
    const form = await t.request({ method: 'GET', url: '/-/snippets/new', token: null, headers: { cookie } });
    assert.equal(form.statusCode, 200);
    const nonce = /<script type="module" nonce="([^"]+)" src="\/-\/snippetd\/editor\/editor\.js"><\/script>/.exec(
      form.body,
    )?.[1];
    assert.ok(nonce, 'the form page has no editor script');
    const formPolicy = directives(form.headers['content-security-policy']);
    assert.equal(formPolicy['style-src'], `'self' 'nonce-${nonce}'`);
    assert.equal(formPolicy['script-src'], `'nonce-${nonce}'`);

    const page = await t.request({
      method: 'GET',
      url: new URL(snippet.web_url).pathname,
      token: null,
      headers: { cookie },
    });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /editor\.js/);
    assert.equal(directives(page.headers['content-security-policy'])['style-src'], "'self'");
  });

  it('serves nothing else under its path', async () => {
    for (const name of [
      'nope.js',
      'chunk-AAAAAAAA.js',
      'editor.js.map',
      '..%2Fapp.css',
      '%2E%2E%2F%2E%2E%2Fpackage.json',
    ]) {
      const res = await get(`${EDITOR}/${name}`);
      assert.equal(res.statusCode, 404, name);
    }
  });
});

// Snippet pages at the URLs the API hands out (web_url, raw_url, files[].raw_url): the page, raw files
// with Workhorse's safe headers, the embed script, GitLab's legacy paths, and 404 for whatever an
// anonymous visitor may not see. (Pages have no sign-in yet: every page is seen as anonymous.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const gitBlobId = (content: string | Buffer) =>
  execFileSync('git', ['hash-object', '--stdin'], { input: content }).toString().trim();
const pathOf = (url: string) => new URL(url).pathname;
/** What GitLab's SendsBlob adds to a raw file's max-age: a shared cache asks again after a minute. */
const SHARED_CACHE = 'must-revalidate, stale-while-revalidate=60, stale-if-error=300, s-maxage=60';

/** The markup and snippet URL the embed script (`((markup, web) => {…})("…", "…");`) writes with. */
function embedded(script: string): { markup: string; web: string } {
  const [markup, web] = JSON.parse(`[${script.slice(script.lastIndexOf('})(') + 3, -3)}]`);
  return { markup, web };
}

/** The start of a numbered line (render-worker.ts). */
const line = (prefix: string, n: number) =>
  `<span class="line" id="${prefix}${n}"><a class="ln" href="#${prefix}${n}" aria-hidden="true" tabindex="-1"></a>`;

describe('snippet pages', () => {
  let t: TestApp;
  const projects: Record<string, { id: number; path: string }> = {};
  let snippet: any;

  async function createSnippet(project: string, visibility: string, files: { file_path: string; content: string }[]) {
    return t.must('POST', `/projects/${projects[project].id}/snippets`, ROOT_TOKEN, {
      title: `A <b>${visibility}</b> snippet`,
      description: 'Some **bold** text <script>alert(1)</script>',
      visibility,
      files,
    });
  }

  before(async () => {
    t = await createTestApp();
    for (const visibility of ['private', 'internal', 'public']) {
      const p = await t.must('POST', '/projects', ROOT_TOKEN, { name: `${visibility}-project`, visibility });
      projects[visibility] = { id: p.id, path: p.path_with_namespace };
    }
    snippet = await createSnippet('public', 'public', [
      { file_path: 'hello.rb', content: 'def hello\n  puts "<hi>"\nend\n' },
      {
        file_path: 'README.md',
        content: '# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n<img src=x onerror=alert(1)>\n',
      },
      { file_path: 'page.html', content: '<html><script>alert(1)</script></html>' },
    ]);
  });
  after(() => t.close());

  it('the web_url is an HTML page with the title, description and every file, all escaped', async () => {
    const res = await t.request({ method: 'GET', url: pathOf(snippet.web_url), token: null });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.body, /<h1>A &lt;b&gt;public&lt;\/b&gt; snippet<\/h1>/);
    // Markdown as GitLab renders it: its allowed HTML kept, a script dropped with its text.
    assert.match(res.body, /<p>Some <strong>bold<\/strong> text <\/p>/);
    assert.doesNotMatch(res.body, /<script>alert|<img src=x|<img[^>]*onerror/);
    // Code highlighted on the server, Markdown rendered with its table and task list.
    assert.match(res.body, /<span class="hljs-keyword">def<\/span> <span class="hljs-title function_">hello<\/span>/);
    assert.match(res.body, /<table>\s*<thead>\s*<tr>\s*<th>a<\/th>/);
    assert.ok(
      res.body.includes(
        '<li class="task-list-item"><label class="task-list-item-label"><input type="checkbox" class="task-list-item-checkbox" disabled checked /> done</label></li>',
      ),
    );
    assert.deepEqual(
      [...res.body.matchAll(/<h2 id="file-\d+-name">([^<]+)<\/h2>/g)].map((m) => m[1]),
      ['README.md', 'hello.rb', 'page.html'],
    );
    for (const file of snippet.files) assert.ok(res.body.includes(`href="${file.raw_url}"`), file.raw_url);
    assert.ok(res.body.includes(`value="${snippet.http_url_to_repo}"`));
  });

  it("pages carry a policy that runs only the page's own script", async () => {
    const res = await t.request({ method: 'GET', url: pathOf(snippet.web_url), token: null });
    const policy = String(res.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(policy)?.[1];
    assert.ok(nonce, policy);
    assert.match(policy, /default-src 'none'/);
    assert.equal([...res.body.matchAll(/<script/g)].length, 1);
    assert.ok(res.body.includes(`<script nonce="${nonce}">`));
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['referrer-policy'], 'strict-origin-when-cross-origin');
  });

  it('raw_url and each files[].raw_url answer the file with safe headers and its blob id as ETag', async () => {
    const first = await t.request({ method: 'GET', url: pathOf(snippet.raw_url), token: null });
    assert.equal(first.statusCode, 200);
    assert.ok(first.body.startsWith('# Notes'));
    for (const file of snippet.files) {
      const res = await t.request({ method: 'GET', url: pathOf(file.raw_url), token: null });
      assert.equal(res.statusCode, 200, file.raw_url);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; sandbox");
      assert.equal(
        res.headers['content-disposition'],
        `inline; filename="${file.path}"; filename*=UTF-8''${file.path}`,
      );
      assert.equal(res.headers['cache-control'], `max-age=60, public, ${SHARED_CACHE}`);
      assert.equal(res.headers.etag, `"${gitBlobId(res.rawPayload)}"`);
    }
  });

  it('HTML stays text/plain, inline=false downloads, an image is inline and SVG or binary is an attachment', async () => {
    const s = await t.must('POST', `/projects/${projects.public.id}/snippets`, ROOT_TOKEN, {
      title: 'kinds',
      visibility: 'public',
      files: [
        { file_path: 'a.html', content: '<script>alert(1)</script>' },
        { file_path: 'b.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' },
      ],
    });
    const raw = (name: string, query = '') =>
      t.request({ method: 'GET', url: `${pathOf(s.web_url)}/raw/main/${name}${query}`, token: null });
    const html = await raw('a.html');
    assert.equal(html.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(String(html.headers['content-disposition']), /^inline;/);
    assert.match(String((await raw('a.html', '?inline=false')).headers['content-disposition']), /^attachment;/);
    const svg = await raw('b.svg');
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.match(String(svg.headers['content-disposition']), /^attachment;/);
  });

  it('a file named as an image is shown as an image on its page', async () => {
    const s = await createSnippet('public', 'public', [{ file_path: 'dot.png', content: 'not really a png' }]);
    const page = await t.request({ method: 'GET', url: pathOf(s.web_url), token: null });
    assert.ok(page.body.includes(`<img src="${s.files[0].raw_url}" alt="dot.png">`));
  });

  it('answers 304 to If-None-Match with the blob id', async () => {
    const url = pathOf(snippet.files[1].raw_url);
    const etag = (await t.request({ method: 'GET', url, token: null })).headers.etag as string;
    const again = await t.request({
      method: 'GET',
      url,
      token: null,
      headers: { 'if-none-match': `"other", ${etag}` },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const changed = await t.request({ method: 'GET', url, token: null, headers: { 'if-none-match': '"other"' } });
    assert.equal(changed.statusCode, 200);
  });

  it('a file at an earlier commit: the old bytes, cached a minute at a commit id too, as GitLab caches a snippet raw', async () => {
    const s = await createSnippet('public', 'public', [{ file_path: 'v.txt', content: 'one' }]);
    await t.must('PUT', `/projects/${projects.public.id}/snippets/${s.id}`, ROOT_TOKEN, {
      files: [{ action: 'update', file_path: 'v.txt', content: 'two' }],
    });
    const gitDir = (await t.gitDir('snippet', s.id))!;
    const first = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'main~1']).toString().trim();
    const raw = (ref: string) =>
      t.request({ method: 'GET', url: `${pathOf(s.web_url)}/raw/${ref}/v.txt`, token: null });
    const now = await raw('main');
    assert.equal(now.body, 'two');
    assert.equal(now.headers['cache-control'], `max-age=60, public, ${SHARED_CACHE}`);
    const then = await raw(first);
    assert.equal(then.body, 'one');
    assert.equal(then.headers.etag, `"${gitBlobId('one')}"`);
    assert.equal(then.headers['cache-control'], `max-age=60, public, ${SHARED_CACHE}`);
    // Ancestry steps are resolved, other revision expressions are not (docs/gitlab-compatibility.md#d7).
    assert.equal((await raw('main~1')).body, 'one');
    assertHiddenPage(await raw('main..main'), `${pathOf(s.web_url)}/raw/main..main/v.txt`, false);
  });

  it('a snippet page with one 200-line file weighs under 100 KB with its stylesheet', async () => {
    const code = Array.from({ length: 200 }, (_, i) => `  def method_${i}(x) = x * ${i} # line ${i}`).join('\n');
    const s = await createSnippet('public', 'public', [
      { file_path: 'code.rb', content: `class Code\n${code}\nend\n` },
    ]);
    const page = await t.request({ method: 'GET', url: pathOf(s.web_url), token: null });
    const css = await t.request({ method: 'GET', url: '/-/snippetd/app.css', token: null });
    assert.equal(css.statusCode, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    const bytes = page.rawPayload.length + css.rawPayload.length;
    assert.ok(bytes < 100 * 1024, `${bytes} bytes`);
  });

  it('pages, the embed script and the stylesheet are sent in brotli or gzip; raw files exactly as stored', async () => {
    const content = 'const answer = 42; // the same line again\n'.repeat(3000);
    const s = await createSnippet('public', 'public', [{ file_path: 'long.js', content }]);
    const get = (url: string, acceptEncoding?: string) =>
      t.request({
        method: 'GET',
        url,
        token: null,
        headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
      });
    const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync } as const;
    // A page's nonce differs on every answer.
    const sameButNonce = (text: string) => text.replace(/nonce="[^"]+"/g, 'nonce');
    for (const url of [pathOf(s.web_url), `${pathOf(s.web_url)}.js`, '/-/snippetd/app.css']) {
      const identity = await get(url);
      assert.equal(identity.statusCode, 200, url);
      assert.equal(identity.headers['content-encoding'], undefined, url);
      for (const [accepted, encoding] of [
        ['gzip, deflate, br', 'br'],
        ['gzip', 'gzip'],
      ] as const) {
        const res = await get(url, accepted);
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-encoding'], encoding, url);
        assert.equal(res.headers.vary, 'accept-encoding', url);
        assert.equal(res.headers['content-type'], identity.headers['content-type'], url);
        const decoded = decode[encoding](res.rawPayload).toString('utf8');
        assert.equal(sameButNonce(decoded), sameButNonce(identity.body), url);
        if (url !== '/-/snippetd/app.css') assert.ok(res.rawPayload.length * 10 < identity.rawPayload.length, url);
      }
    }
    // Raw files keep Workhorse's answer: the bytes as stored, their length, their blob id.
    for (const url of [pathOf(s.raw_url), pathOf(s.files[0].raw_url)]) {
      const res = await get(url, 'gzip, deflate, br');
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-encoding'], undefined, url);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(content)));
      assert.equal(res.headers.etag, `"${gitBlobId(content)}"`);
      assert.equal(res.body, content);
    }
  });

  it('a file over 1 MB is too large to display: its page and embed say so, with Raw and Download links', async () => {
    const s = await createSnippet('public', 'public', [
      { file_path: 'big.md', content: `# Big\n\n${'word '.repeat(220_000)}` },
      { file_path: 'small.md', content: '# Small <b>\n' },
    ]);
    const raw = s.files.find((f: { path: string }) => f.path === 'big.md').raw_url;
    const message = `<p class="too-large">This file is too large to display: it is larger than 1 MB. You can <a href="${raw}">view it raw</a> or <a href="${raw}?inline=false" download>download it</a> instead.</p>`;
    const page = await t.request({ method: 'GET', url: pathOf(s.web_url), token: null });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(message), page.body);
    assert.doesNotMatch(page.body, /word word/);
    // A copy button only for the file whose text the page holds.
    const copies = [...page.body.matchAll(/<button type="button" class="copy" data-copy="(file-\d+)"/g)].map(
      (m) => m[1],
    );
    const ids = [
      ...page.body.matchAll(
        /<section class="file" id="(file-\d+)"[^>]*>\s*<header class="file-header">\s*<h2 id="file-\d+-name">([^<]+)</g,
      ),
    ];
    assert.deepEqual(
      copies,
      ids.filter((m) => m[2] === 'small.md').map((m) => m[1]),
    );
    // The small file beside it is rendered, its source shown escaped.
    assert.ok(
      page.body.includes(
        '<h1><a id="user-content-small-" class="anchor" href="#small-" aria-hidden="true" tabindex="-1"></a>Small <b></b></h1>',
      ),
    );
    assert.ok(page.body.includes('<pre><code># Small &lt;b&gt;\n</code></pre></details>'));
    const embed = await t.request({ method: 'GET', url: `${pathOf(s.web_url)}.js`, token: null });
    assert.ok(embedded(embed.body).markup.includes(message));
  });

  it('Markdown whose rendering would be far larger than the file is shown as its text', async () => {
    // 100 links to one 100 KB address: 200 KB of Markdown would render to about 20 MB of HTML.
    const md = `${'[x] '.repeat(100)}\n\n[x]: https://example.com/${'a'.repeat(100_000)}\n`;
    const s = await createSnippet('public', 'public', [{ file_path: 'refs.md', content: md }]);
    const page = await t.request({ method: 'GET', url: pathOf(s.web_url), token: null });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.length < 1_000_000, `a page of ${page.body.length} characters`);
    assert.match(page.body, /<div class="markdown"><pre class="plain">\[x\] \[x\]/);
    assert.doesNotMatch(page.body, /<a href="https:\/\/example.com/);
  });

  it('a page seen before shows the files and description as they are after an update', async () => {
    const s = await createSnippet('public', 'public', [
      { file_path: 'a.rb', content: 'old_a = 1\n' },
      { file_path: 'b.rb', content: 'kept_b = 2\n' },
    ]);
    const page = async () => (await t.request({ method: 'GET', url: pathOf(s.web_url), token: null })).body;
    const names = (body: string) => [...body.matchAll(/<h2 id="file-\d+-name">([^<]+)<\/h2>/g)].map((m) => m[1]);
    const first = await page();
    assert.deepEqual(names(first), ['a.rb', 'b.rb']);
    assert.match(first, /old_a/);
    assert.ok(first.includes(`<code class="hljs language-rb">${line('file-2-L', 1)}kept_b`));
    await t.must('PUT', `/projects/${projects.public.id}/snippets/${s.id}`, ROOT_TOKEN, {
      description: 'Now *emphasised*',
      files: [
        { action: 'update', file_path: 'a.rb', content: 'new_a = 1\n' },
        { action: 'move', previous_path: 'b.rb', file_path: 'b.py' }, // the same blob under another name
        { action: 'create', file_path: 'c.md', content: '# Added' },
      ],
    });
    const now = await page();
    assert.deepEqual(names(now), ['a.rb', 'b.py', 'c.md']);
    assert.match(now, /new_a/);
    assert.doesNotMatch(now, /old_a/);
    assert.ok(
      now.includes(`<code class="hljs language-py">${line('file-2-L', 1)}kept_b = <span class="hljs-number">2</span>`),
    );
    assert.match(now, /<h1><a id="user-content-added" class="anchor" href="#added"[^>]*><\/a>Added<\/h1>/);
    assert.match(now, /<p>Now <em>emphasised<\/em><\/p>/);
    assert.doesNotMatch(now, /<strong>bold<\/strong>/);
  });

  it("GitLab's legacy paths move permanently to the /-/ paths, query kept", async () => {
    const legacy = pathOf(snippet.web_url).replace('/-/snippets/', '/snippets/');
    const page = await t.request({ method: 'GET', url: legacy, token: null });
    assert.equal(page.statusCode, 301);
    assert.equal(page.headers.location, pathOf(snippet.web_url));
    const raw = await t.request({ method: 'GET', url: `${legacy}/raw?inline=false`, token: null });
    assert.equal(raw.statusCode, 301);
    assert.equal(raw.headers.location, `${pathOf(snippet.raw_url)}?inline=false`);
  });

  it('a legacy path never redirects to another site: an encoded "/" or "\\" in it is not found', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    for (const path of ['/%2Fevil.example/snippets/1', '/%5Cevil.example/snippets/1', '/a/%2F%2Fb/snippets/1/raw']) {
      // Not found, so a visitor not signed in is sent to sign in, on this site, and the path only as a parameter.
      const res = await t.socket('GET', path);
      assert.equal(res.statusCode, 302, path);
      assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(path)}`, path);
    }
  });

  it('the embed script writes the files with a scoped stylesheet, and exists only for public snippets', async () => {
    const res = await t.request({ method: 'GET', url: `${pathOf(snippet.web_url)}.js`, token: null });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/javascript; charset=utf-8');
    assert.ok(res.body.startsWith('((markup, web) => {\n'));
    assert.doesNotMatch(res.body, /<\/script/i);
    const { markup, web } = embedded(res.body);
    assert.equal(web, snippet.web_url);
    assert.match(markup, /^<style>\.snippetd-embed\{/);
    assert.match(markup, /<span class="hljs-keyword">def<\/span>/);
    assert.doesNotMatch(markup, /class="copy"/, 'the embed runs no script of ours to copy with');
  });

  describe('whatever an anonymous visitor may not see is 404, never 403, on every URL the API hands out', () => {
    for (const projectVisibility of ['private', 'internal', 'public']) {
      for (const snippetVisibility of ['private', 'internal', 'public']) {
        const visible = projectVisibility === 'public' && snippetVisibility === 'public';
        it(`a ${snippetVisibility} snippet in a ${projectVisibility} project: ${visible ? 200 : 404}`, async () => {
          if (snippetVisibility === 'public' && projectVisibility !== 'public') return; // refused by the API
          if (snippetVisibility === 'internal' && projectVisibility === 'private') return;
          const s = await createSnippet(projectVisibility, snippetVisibility, [
            { file_path: 'f.txt', content: 'secret' },
          ]);
          for (const url of [s.web_url, s.raw_url, s.files[0].raw_url, `${s.web_url}.js`]) {
            const res = await t.request({ method: 'GET', url: pathOf(url), token: null });
            if (visible) assert.equal(res.statusCode, 200, url);
            else {
              assertHiddenPage(res, url, false);
              assert.doesNotMatch(res.body, /secret/);
            }
          }
        });
      }
    }

    it('a public snippet of a project whose snippets are for members only, or disabled: 404', async () => {
      const s = await createSnippet('public', 'public', [{ file_path: 'f.txt', content: 'members' }]);
      for (const level of ['private', 'disabled']) {
        await t.must('PUT', `/projects/${projects.public.id}`, ROOT_TOKEN, { snippets_access_level: level });
        for (const url of [s.web_url, s.raw_url]) {
          const res = await t.request({ method: 'GET', url: pathOf(url), token: null });
          assertHiddenPage(res, url, false);
        }
      }
      await t.must('PUT', `/projects/${projects.public.id}`, ROOT_TOKEN, { snippets_access_level: 'enabled' });
    });

    it('an unknown snippet, project or ref is not found: a visitor is sent to sign in', async () => {
      for (const url of [
        `/${projects.public.path}/-/snippets/999999`,
        '/nobody/nothing/-/snippets/1',
        `${pathOf(snippet.web_url)}/raw/no-such-ref/hello.rb`,
        `${pathOf(snippet.web_url)}/raw/main/missing.txt`,
      ]) {
        assertHiddenPage(await t.request({ method: 'GET', url, token: null }), url, false);
      }
    });
  });
});

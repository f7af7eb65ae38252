// How files and Markdown look on pages, against GitLab's rendering: numbered lines with L<n> anchors,
// Markdown with GitLab's HTML allowlist, table alignment as classes, heading anchors, footnotes, labelled
// task lists and images; hostile Markdown brings no script, handler, javascript: URL or style through;
// repository files' Raw opens the raw file page; copy buttons only where there is text.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';
import { keptView } from '../../src/domain/rendering.ts';

const pathOf = (url: string) => new URL(url).pathname;
/** What GitLab's SendsBlob adds to a raw file's max-age: a shared cache asks again after a minute. */
const SHARED_CACHE = 'must-revalidate, stale-while-revalidate=60, stale-if-error=300, s-maxage=60';

/** The start of a numbered line (render-worker.ts). */
const line = (prefix: string, n: number) =>
  `<span class="line" id="${prefix}${n}"><a class="ln" href="#${prefix}${n}" aria-hidden="true" tabindex="-1"></a>`;

/** The rendered Markdown of the page's first file (not its escaped Source panel). */
function renderedMarkdown(page: string): string {
  const m = /<div class="markdown">([\s\S]*?)<\/div>\n<details class="source">/.exec(page);
  assert.ok(m, 'a rendered Markdown file');
  return m[1];
}

/** Every attribute name in the markup's tags, and every tag name. */
function tagsAndAttributes(markup: string) {
  const tags = new Set<string>();
  const attributes = new Set<string>();
  for (const [tag, name, rest] of markup.matchAll(/<([a-zA-Z][\w-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g)) {
    tags.add(name.toLowerCase());
    for (const [, attribute] of rest.matchAll(/\s([^\s=/>]+)(?:="[^"]*")?/g)) attributes.add(attribute.toLowerCase());
    assert.doesNotMatch(tag, /'/, `attribute values are double-quoted: ${tag}`);
  }
  return { tags, attributes };
}

// What GitLab's sanitizer keeps (render-worker.ts SANITIZE); anything else came through it.
const ALLOWED_TAGS = new Set(
  'h1 h2 h3 h4 h5 h6 br b i strong em a pre code img tt div ins del sup sub p ol ul table thead tbody tfoot blockquote dl dt dd kbd q samp var hr ruby rt rp li tr td th s strike summary details caption figure figcaption abbr bdo cite dfn mark small span time wbr section label input'.split(
    ' ',
  ),
);
const ALLOWED_ATTRIBUTES = new Set(
  'id class title lang dir aria-hidden aria-label href name target rel tabindex src alt width height loading colspan rowspan scope start type open datetime cite data-footnotes disabled checked'.split(
    ' ',
  ),
);

const HOSTILE = `# Probe

<script>alert('script')</script>
<img src=x onerror="alert('onerror')">
<img src="javascript:alert('img')">
<img src="data:image/svg+xml,<svg onload=alert(1)>">
<svg onload="alert('svg')"><circle r="1"/></svg>
<a href="javascript:alert('a')">a</a> <a href="JaVaScRiPt:alert('case')">case</a>
<a href="jav&#x09;ascript:alert('tab')">tab</a> <a href="&#106;avascript:alert('entity')">entity</a>
<a href="data:text/html,<script>alert(1)</script>">data</a> <a href="vbscript:msgbox(1)">vb</a>
[md](javascript:alert('md')) [md2](<javascript:alert('md2')>) ![mdimg](javascript:alert('mdimg'))
<b onclick="alert('click')" onmouseover="alert('over')">bold</b>
<p style="position:fixed;top:0" class="copy alert" id="content">styled</p>
<style>body{display:none}</style>
<iframe src="https://example.com"></iframe> <object data="x"></object> <embed src="x">
<form action="https://example.com"><input type="text" name="q"><button>go</button></form>
<meta http-equiv="refresh" content="0;url=https://example.com"> <base href="https://example.com/">
<details open ontoggle="alert('toggle')"><summary onclick="alert(1)">more</summary>inside</details>
<a href="https://example.com" target="_self" rel="opener">ext</a>
<math><mi xlink:href="javascript:alert(1)">m</mi></math>
<table><tr><td style="color:red" background="javascript:alert(1)">cell</td></tr></table>
`;

describe('rendered files and Markdown on pages', () => {
  let t: TestApp;
  let project: any;
  const page = (url: string) => t.request({ method: 'GET', url, token: null });
  const snippet = (files: { file_path: string; content: string }[], description?: string) =>
    t.must('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
      title: 'rendering',
      visibility: 'public',
      description,
      files,
    });

  before(async () => {
    // A budget no rendering here reaches, however loaded the machine: the first one starts a render thread,
    // which loads its modules through tsx, and these pages must be rendered in full, not shown as text.
    t = await createTestApp({ renderBudgetMs: 60_000 });
    project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'render', visibility: 'public' });
  });
  after(() => t.close());

  it('Markdown as GitLab renders it: aligned cells as classes, allowed HTML, anchors, footnotes, task lists, images', async () => {
    const s = await snippet([
      {
        file_path: 'NOTES.md',
        content: `# Read me first!

## Usage
## Usage

| left | centre | right | none |
|:-----|:------:|------:|------|
| 1 | 2 | 3 | 4 |

- [ ] to do with **bold**
- [x] done

<details><summary>More</summary>

Hidden *text*, <b>b</b>, <kbd>Ctrl</kbd>+<kbd>C</kbd>, x<sup>2</sup>, H<sub>2</sub>O, <abbr title="HyperText">HTML</abbr>.

</details>

A claim[^1].

[^1]: The source.

![a diagram](https://example.com/diagram.png) ![local](diagram.png) [docs](https://docs.example.com) [other](other.md)
`,
      },
    ]);
    const res = await page(pathOf(s.web_url));
    assert.equal(res.statusCode, 200);
    const md = renderedMarkdown(res.body);
    assert.ok(
      md.startsWith(
        '<h1><a id="user-content-read-me-first" class="anchor" href="#read-me-first" aria-hidden="true" tabindex="-1"></a>Read me first!</h1>\n' +
          '<h2><a id="user-content-usage" class="anchor" href="#usage" aria-hidden="true" tabindex="-1"></a>Usage</h2>\n' +
          '<h2><a id="user-content-usage-1" class="anchor" href="#usage-1" aria-hidden="true" tabindex="-1"></a>Usage</h2>\n',
      ),
      md,
    );
    assert.ok(
      md.includes(
        '<tr>\n<th class="text-left">left</th>\n<th class="text-center">centre</th>\n<th class="text-right">right</th>\n<th>none</th>\n</tr>',
      ),
    );
    assert.ok(
      md.includes(
        '<tr>\n<td class="text-left">1</td>\n<td class="text-center">2</td>\n<td class="text-right">3</td>\n<td>4</td>\n</tr>',
      ),
    );
    assert.ok(
      md.includes(
        '<ul>\n<li class="task-list-item"><label class="task-list-item-label"><input type="checkbox" class="task-list-item-checkbox" disabled /> to do with <strong>bold</strong></label></li>\n' +
          '<li class="task-list-item"><label class="task-list-item-label"><input type="checkbox" class="task-list-item-checkbox" disabled checked /> done</label></li>\n</ul>',
      ),
    );
    assert.ok(
      md.includes(
        '<details><summary>More</summary>\n<p>Hidden <em>text</em>, <b>b</b>, <kbd>Ctrl</kbd>+<kbd>C</kbd>, x<sup>2</sup>, H<sub>2</sub>O, <abbr title="HyperText">HTML</abbr>.</p>\n</details>',
      ),
    );
    const ref = /<sup class="footnote-ref"><a href="#fn-1-(\d+)" id="fnref-1-\1">1<\/a><\/sup>/.exec(md);
    assert.ok(ref, md);
    assert.ok(
      md.includes(
        `<section class="footnotes" data-footnotes>\n<ol>\n<li id="fn-1-${ref[1]}"><p>The source. <a href="#fnref-1-${ref[1]}" class="footnote-backref" aria-label="Back to reference 1">↩︎</a></p>\n</li>\n</ol>\n</section>`,
      ),
    );
    assert.ok(
      md.includes(
        '<a class="no-attachment-icon" href="https://example.com/diagram.png" target="_blank" rel="nofollow noreferrer noopener"><img src="https://example.com/diagram.png" alt="a diagram" loading="lazy" /></a> ' +
          '<a class="no-attachment-icon" href="diagram.png"><img src="diagram.png" alt="local" loading="lazy" /></a> ' +
          '<a href="https://docs.example.com" target="_blank" rel="nofollow noreferrer noopener">docs</a> <a href="other.md">other</a>',
      ),
      md,
    );
    // Images from other sites load over https, the one thing the page's policy allows beyond itself.
    assert.match(res.headers['content-security-policy'] as string, /img-src 'self' data: https:;/);
    assert.doesNotMatch(res.headers['content-security-policy'] as string, /style-src[^;]*unsafe-inline/);
  });

  it('hostile Markdown brings no script, handler, javascript: or data: URL, style or foreign element through', async () => {
    const s = await snippet([{ file_path: 'probe.md', content: HOSTILE }], HOSTILE);
    const res = await page(pathOf(s.web_url));
    assert.equal(res.statusCode, 200);
    const description = /<div class="description markdown">([\s\S]*?)<\/div>\n<p class="meta">in /.exec(res.body);
    assert.ok(description, 'the description rendered');
    for (const [where, markup] of [
      ['file', renderedMarkdown(res.body)],
      ['description', description[1]],
    ]) {
      const { tags, attributes } = tagsAndAttributes(markup);
      assert.deepEqual(
        [...tags].filter((tag) => !ALLOWED_TAGS.has(tag)),
        [],
        `${where}: foreign elements`,
      );
      assert.deepEqual(
        [...attributes].filter((a) => !ALLOWED_ATTRIBUTES.has(a)),
        [],
        `${where}: foreign attributes`,
      );
      const tagsOnly = [...markup.matchAll(/<[^>]+>/g)].join('\n');
      assert.doesNotMatch(tagsOnly, /javascript|vbscript|data:|alert|style/i, where);
      assert.doesNotMatch(markup, /alert\('(script|onerror|svg|click|over|toggle)'\)|body\{display/, where);
      for (const [, url] of markup.matchAll(/(?:href|src)="([^"]*)"/g))
        assert.match(url, /^(https:\/\/|#|x$)/, `${where}: ${url}`);
      // The user's own id, class and target are gone; the renderer's own stay.
      assert.doesNotMatch(markup, /id="content"|class="copy|target="_self"|rel="opener"/, where);
      assert.ok(markup.includes('<p>styled</p>'), where);
      assert.ok(markup.includes('<details open><summary>more</summary>inside</details>'), where);
      assert.ok(markup.includes('<b>bold</b>'), where);
      assert.ok(
        markup.includes('<a href="https://example.com" target="_blank" rel="nofollow noreferrer noopener">ext</a>'),
      );
    }
    // The only scripts on the page are its own, with the page's nonce.
    const nonce = /'nonce-([^']+)'/.exec(res.headers['content-security-policy'] as string)![1];
    for (const [tag] of res.body.matchAll(/<script[^>]*>/g)) assert.equal(tag, `<script nonce="${nonce}">`);
  });

  it('code in numbered lines with L<n> ids; several files number theirs apart; the text is kept exactly', async () => {
    const one = await snippet([{ file_path: 'a.js', content: '/* one\ntwo */\nconst x = "<y>";\n' }]);
    const body = (await page(pathOf(one.web_url))).body;
    assert.ok(
      body.includes(
        `<pre class="code numbered digits-1" tabindex="0"><code class="hljs language-js">${line('L', 1)}<span class="hljs-comment">/* one</span>\n</span>` +
          `${line('L', 2)}<span class="hljs-comment">two */</span>\n</span>` +
          `${line('L', 3)}<span class="hljs-keyword">const</span> x = <span class="hljs-string">&quot;&lt;y&gt;&quot;</span>;\n</span></code></pre>`,
      ),
      body,
    );
    const several = await snippet([
      { file_path: 'a.txt', content: 'first\nsecond' },
      { file_path: 'b.txt', content: `${'x\n'.repeat(1000)}` },
    ]);
    const page2 = (await page(pathOf(several.web_url))).body;
    // A file not ending in a line break ends on its last line, with no break after it.
    assert.ok(page2.includes(`${line('file-1-L', 1)}first\n</span>${line('file-1-L', 2)}second</span></code></pre>`));
    assert.ok(
      page2.includes(
        `<pre class="code numbered digits-4" tabindex="0"><code class="hljs language-txt">${line('file-2-L', 1)}x\n`,
      ),
    );
    assert.ok(page2.includes(`${line('file-2-L', 1000)}x\n</span></code></pre>`));
    assert.doesNotMatch(page2, /id="L\d/);
    assert.deepEqual(
      [...page2.matchAll(/<button type="button" class="copy" data-copy="([^"]+)"/g)].map((m) => m[1]),
      ['clone-url', 'embed', 'file-1', 'file-2'],
    );
    // The page's text, tags taken away, is the file's text: numbers are drawn by the stylesheet.
    const code = /<pre class="code numbered digits-1" tabindex="0"><code[^>]*>([\s\S]*?)<\/code><\/pre>/.exec(body)![1];
    const text = code
      .replace(/<[^>]+>/g, '')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    assert.equal(text, '/* one\ntwo */\nconst x = "<y>";\n');
  });

  it("a repository file's page numbers its lines and its Raw opens the raw file page, not the API", async () => {
    await t.must(
      'POST',
      `/projects/${project.id}/repository/files/${encodeURIComponent('ci/deploy.yml')}`,
      ROOT_TOKEN,
      {
        branch: 'main',
        content: 'deploy:\n  script: make deploy\n',
        commit_message: 'ci',
      },
    );
    const blob = await page(`${pathOf(project.web_url)}/-/blob/main/ci/deploy.yml`);
    assert.equal(blob.statusCode, 200);
    const raw = `${project.web_url}/-/raw/main/ci/deploy.yml`;
    assert.ok(
      blob.body.includes(
        `<nav class="file-actions"><a href="${raw}">Raw</a> <a href="${raw}?inline=false" download>Download</a>\n<button type="button" class="copy" data-copy="file-1" aria-label="Copy deploy.yml" hidden>Copy</button></nav>`,
      ),
      blob.body,
    );
    assert.ok(blob.body.includes(`${line('L', 1)}<span class="hljs-attr">deploy:</span>\n</span>`));
    assert.doesNotMatch(blob.body, /\/api\/v4\//);
    const file = await page(pathOf(raw));
    assert.equal(file.statusCode, 200);
    assert.equal(file.body, 'deploy:\n  script: make deploy\n');
    assert.equal(file.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(file.headers['x-content-type-options'], 'nosniff');
    assert.equal(file.headers['content-security-policy'], "default-src 'none'; sandbox");
    assert.equal(file.headers['cache-control'], `max-age=60, public, ${SHARED_CACHE}`);
    assert.match(file.headers['content-disposition'] as string, /^inline; filename="deploy.yml"/);
    const download = await page(`${pathOf(raw)}?inline=false`);
    assert.match(download.headers['content-disposition'] as string, /^attachment; filename="deploy.yml"/);
    // At a full commit id a project's file is kept an hour, as GitLab's Projects::RawController keeps it.
    const [head] = await t.ok(
      'GET',
      `/projects/${project.id}/repository/commits?per_page=1`,
      ROOT_TOKEN,
      undefined,
      200,
    );
    const atCommit = await page(`${pathOf(project.web_url)}/-/raw/${head.id}/ci/deploy.yml`);
    assert.equal(atCommit.body, 'deploy:\n  script: make deploy\n');
    assert.equal(atCommit.headers['cache-control'], `max-age=3600, public, ${SHARED_CACHE}`);
    const missing = `${pathOf(project.web_url)}/-/raw/main/ci/missing.yml`;
    assertHiddenPage(await page(missing), missing, false);
    // A private project's raw files are as hidden as its pages.
    const secret = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'secret-raw',
      visibility: 'private',
      initialize_with_readme: true,
    });
    const hidden = `${pathOf(secret.web_url)}/-/raw/main/README.md`;
    assertHiddenPage(await page(hidden), hidden, false);
  });

  it("a repository file's relative links lead to the repository's files, its images to their raw bytes", async () => {
    await t.must(
      'POST',
      `/projects/${project.id}/repository/files/${encodeURIComponent('docs/README.md')}`,
      ROOT_TOKEN,
      {
        branch: 'main',
        content:
          '# Docs\n\n![shot](img/shot.png) [setup](setup.md) [up](../ci/deploy.yml#L2) [top](#docs) [site](/help) [web](https://example.com)\n',
        commit_message: 'docs',
      },
    );
    const root = pathOf(project.web_url);
    const expected =
      `<p><a class="no-attachment-icon" href="${root}/-/raw/main/docs/img/shot.png"><img src="${root}/-/raw/main/docs/img/shot.png" alt="shot" loading="lazy" /></a> ` +
      `<a href="${root}/-/blob/main/docs/setup.md">setup</a> <a href="${root}/-/blob/main/ci/deploy.yml#L2">up</a> ` +
      '<a href="#docs">top</a> <a href="/help">site</a> <a href="https://example.com" target="_blank" rel="nofollow noreferrer noopener">web</a></p>';
    const blob = await page(`${root}/-/blob/main/docs/README.md`);
    assert.ok(blob.body.includes(expected), blob.body);
    // The same README under its directory's files, and the same file in a snippet is left as written.
    assert.ok((await page(`${root}/-/tree/main/docs`)).body.includes(expected));
    const s = await snippet([{ file_path: 'README.md', content: '[setup](setup.md)\n' }]);
    assert.ok((await page(pathOf(s.web_url))).body.includes('<p><a href="setup.md">setup</a></p>'));
  });
});

describe('a page holds at most 4 MB of rendered files', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('shows files until they fill the page, then links the rest; the first is always shown; an embed shows 1 MB', async () => {
    // Each file renders to about 2.3 MB of numbered lines: one fills most of the page.
    const big = 'a\n'.repeat(20_000);
    const snippet = await t.must('POST', '/snippets', ROOT_TOKEN, {
      title: 'large files',
      visibility: 'public',
      files: ['one.txt', 'two.txt', 'three.txt', 'small.txt', 'z.png'].map((file_path) => ({
        file_path,
        content: file_path === 'small.txt' ? 'small\n' : file_path === 'z.png' ? 'png' : big,
      })),
    });
    const notShown = (file: string) =>
      `<p class="too-large">This file is not shown: the files above it fill this page (4 MB of them). You can <a href="${snippet.web_url}/raw/main/${file}">view it raw</a>`;
    const get = async (url: string) => {
      const res = await t.request({ method: 'GET', url: pathOf(url), token: null });
      assert.equal(res.statusCode, 200);
      return res.body;
    };
    // The embed writes the markup its script carries as a JSON string.
    const embed = /^\(\(markup, web\) => \{[\s\S]*?\n\}\)\(("(?:[^"\\]|\\.)*"), /.exec(
      await get(`${snippet.web_url}.js`),
    );
    assert.ok(embed, 'the embed script');
    const body = await get(snippet.web_url);
    assert.ok(body.length < 4.5 * 1024 * 1024, `${body.length} bytes`);
    // In git's order: one.txt (shown whole, though over the page's room alone), small.txt, three.txt, two.txt.
    assert.ok(body.includes('id="file-1-L20000"'), 'one.txt shown whole');
    assert.ok(body.includes('id="file-2-L1"'), 'small.txt shown');
    for (const file of ['three.txt', 'two.txt']) assert.ok(body.includes(notShown(file)), file);
    assert.ok(body.includes(`<div class="image"><img src="${snippet.web_url}/raw/main/z.png"`), 'z.png shown');
    assert.ok(!body.includes(notShown('one.txt')) && !body.includes(notShown('small.txt')));
    // The embed, a guest on another site's page, shows 1 MB, its first file included: one.txt's rendering takes
    // the room whole, so only z.png (an image adds no rendering) is shown.
    const markup = JSON.parse(embed[1]) as string;
    assert.ok(markup.length < 100_000, `${markup.length} characters`);
    for (const file of ['one.txt', 'small.txt', 'three.txt', 'two.txt'])
      assert.ok(
        markup.includes(
          `<p class="too-large">This file is not shown: an embed shows at most 1 MB of files. You can <a href="${snippet.web_url}/raw/main/${file}">view it raw</a>`,
        ),
        file,
      );
    assert.ok(markup.includes(`<div class="image"><img src="${snippet.web_url}/raw/main/z.png"`), 'z.png shown');
    // A first file over the page's room alone: a later file with text is not shown, an image (which adds no
    // rendering) is.
    const over = await t.must('POST', '/snippets', ROOT_TOKEN, {
      title: 'one file fills the page',
      visibility: 'public',
      files: [
        { file_path: 'a.txt', content: 'a\n'.repeat(40_000) },
        { file_path: 'b.txt', content: 'small\n' },
        { file_path: 'c.png', content: 'png' },
      ],
    });
    const page = await get(over.web_url);
    assert.ok(page.includes('id="file-1-L40000"'), 'a.txt shown whole');
    assert.ok(page.includes(notShown('b.txt').replace(snippet.web_url, over.web_url)), 'b.txt not shown');
    assert.ok(page.includes(`<div class="image"><img src="${over.web_url}/raw/main/c.png"`), 'c.png shown');
  });

  it('renders a file only while the page or embed may have room for it', async () => {
    // Ten files of 500 KB, each rendered to about 512,100 characters: the embed (1 MB) renders three and shows
    // two; the page (4 MB) renders nine and shows eight; and they do so whichever comes first.
    const contents = Array.from({ length: 10 }, (_, n) => `${n}${'x'.repeat(500 * 1024)}\n`);
    const files = contents.map((content, n) => ({ file_path: `f${String(n).padStart(2, '0')}.txt`, content }));
    const blobId = (content: string) =>
      crypto
        .createHash('sha1')
        .update(`blob ${Buffer.byteLength(content)}\0${content}`)
        .digest('hex');
    const expected = (rendered: number) => contents.map((_, n) => n < rendered);
    for (const order of ['embed first', 'page first']) {
      const snippet = await t.must('POST', '/snippets', ROOT_TOKEN, { title: order, visibility: 'public', files });
      const rendered = () =>
        files.map((f, n) => keptView(blobId(f.content), f.file_path, `file-${n + 1}-L`) !== undefined);
      const embed = async () => {
        const res = await t.request({ method: 'GET', url: `${pathOf(snippet.web_url)}.js`, token: null });
        assert.equal(res.statusCode, 200);
        assert.ok(res.body.includes('file-2-L1') && !res.body.includes('file-3-L1'), `${order}: the embed shows 2`);
      };
      const page = async () => {
        const res = await t.request({ method: 'GET', url: pathOf(snippet.web_url), token: null });
        assert.equal(res.statusCode, 200);
        assert.ok(res.body.includes('id="file-8-L1"') && !res.body.includes('id="file-9-L1"'), `${order}: 8`);
      };
      if (order === 'embed first') {
        await embed();
        assert.deepEqual(rendered(), expected(3));
        await page();
      } else {
        await page();
        assert.deepEqual(rendered(), expected(9));
        await embed();
      }
      assert.deepEqual(rendered(), expected(9));
      await embed();
      await page();
    }
  });
});

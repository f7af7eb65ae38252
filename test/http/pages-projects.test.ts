// Project pages: the project's web_url, its snippet list (newest first, paginated, title filter) and its
// repository's files, with nothing an anonymous visitor may not see, neither as a page nor in a list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const pathOf = (url: string) => new URL(url).pathname;

describe('project pages', () => {
  let t: TestApp;
  let pub: any;
  let priv: any;
  const page = (url: string) => t.request({ method: 'GET', url, token: null });
  const snippet = (project: any, title: string, visibility: string) =>
    t.must('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
      title,
      visibility,
      files: [{ file_path: 'a.txt', content: title }],
    });

  before(async () => {
    t = await createTestApp();
    pub = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'templates',
      visibility: 'public',
      description: 'Team <templates> & **tools** <script>alert(1)</script>',
      initialize_with_readme: true,
    });
    priv = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'secret', visibility: 'private' });
    await t.must('POST', `/projects/${pub.id}/repository/files/${encodeURIComponent('ci/deploy.yml')}`, ROOT_TOKEN, {
      branch: 'main',
      content: 'deploy:\n  script: make deploy\n',
      commit_message: 'ci',
    });
  });
  after(() => t.close());

  it('the web_url of a public project is its page: name, escaped description, clone URL, files', async () => {
    const res = await page(pathOf(pub.web_url));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    // The description is Markdown as GitLab renders it: an unknown tag and a script are dropped.
    assert.ok(
      res.body.includes('<div class="description markdown"><p>Team  &amp; <strong>tools</strong> </p>\n</div>'),
    );
    assert.doesNotMatch(res.body, /alert\(1\)/);
    assert.ok(
      res.body.includes(
        `<label for="clone-url">Clone with HTTPS</label><span><input id="clone-url" readonly value="${pub.http_url_to_repo}"> <button type="button" class="copy" data-copy="clone-url" aria-label="Copy clone with https" hidden>Copy</button></span>`,
      ),
    );
    // The README rendered below the files, as GitLab shows it.
    assert.match(
      res.body,
      /<section class="file readme" aria-labelledby="readme-name"><header class="file-header"><h2 id="readme-name">README\.md<\/h2><\/header>\n<div class="markdown"><h1><a id="user-content-templates" class="anchor" href="#templates" aria-hidden="true" tabindex="-1"><\/a>templates<\/h1>/,
    );
    assert.ok(res.body.includes(`href="${pub.web_url}/-/tree/main/ci">ci/</a>`));
    assert.ok(res.body.includes(`href="${pub.web_url}/-/blob/main/README.md">README.md</a>`));
  });

  it('a project with an empty repository says so instead of listing files', async () => {
    const empty = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'empty', visibility: 'public' });
    const res = await page(pathOf(empty.web_url));
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h2>Files on main<\/h2><p class="meta">The repository is empty\.<\/p>/);
    assert.doesNotMatch((await page(pathOf(pub.web_url))).body, /The repository is empty/);
  });

  it('a private project and all its pages send an anonymous visitor to sign in', async () => {
    await snippet(priv, 'hidden one', 'private');
    for (const url of [priv.web_url, `${priv.web_url}/-/snippets`, `${priv.web_url}/-/tree/main`]) {
      const res = await page(pathOf(url));
      assertHiddenPage(res, url, false);
      assert.doesNotMatch(res.body, /hidden one/);
    }
  });

  it('lists only the snippets the visitor may see, newest first, 20 a page, with a title filter', async () => {
    const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'many', visibility: 'public' });
    await snippet(project, 'internal only', 'internal');
    await snippet(project, 'private only', 'private');
    for (let i = 1; i <= 21; i++) await snippet(project, `note ${i}`, 'public');
    const first = await page(`${pathOf(project.web_url)}/-/snippets`);
    assert.equal(first.statusCode, 200);
    const titles = (body: string) => [...body.matchAll(/-\/snippets\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);
    assert.deepEqual(
      titles(first.body),
      Array.from({ length: 20 }, (_, i) => `note ${21 - i}`),
    );
    assert.doesNotMatch(first.body, /internal only|private only/);
    assert.match(first.body, /<a rel="next" href="[^"]*\/-\/snippets\?page=2">Older<\/a>/);
    const second = await page(`${pathOf(project.web_url)}/-/snippets?page=2`);
    assert.deepEqual(titles(second.body), ['note 1']);
    assert.doesNotMatch(second.body, /rel="next"/);
    const filtered = await page(`${pathOf(project.web_url)}/-/snippets?search=NOTE%202`);
    assert.deepEqual(titles(filtered.body), ['note 21', 'note 20', 'note 2']);
    const literal = await page(`${pathOf(project.web_url)}/-/snippets?search=%25`);
    assert.deepEqual(titles(literal.body), []);
    // The project page shows the newest of them too, and none it should hide.
    const home = await page(pathOf(project.web_url));
    assert.deepEqual(titles(home.body).slice(0, 2), ['note 21', 'note 20']);
    assert.doesNotMatch(home.body, /internal only|private only/);
  });

  it('a project whose snippets are for members only has no snippet list for others', async () => {
    const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'members-only', visibility: 'public' });
    await snippet(project, 'members see this', 'public');
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { snippets_access_level: 'private' });
    assertHiddenPage(
      await page(`${pathOf(project.web_url)}/-/snippets`),
      `${pathOf(project.web_url)}/-/snippets`,
      false,
    );
    const home = await page(pathOf(project.web_url));
    assert.equal(home.statusCode, 200);
    assert.doesNotMatch(home.body, /members see this|<h2>Snippets<\/h2>/);
  });

  it('shows a directory of the repository and a file in it, highlighted', async () => {
    const tree = await page(`${pathOf(pub.web_url)}/-/tree/main/ci`);
    assert.equal(tree.statusCode, 200);
    assert.ok(tree.body.includes(`href="${pub.web_url}/-/blob/main/ci/deploy.yml">deploy.yml</a>`));
    assert.doesNotMatch(tree.body, /class="file readme"/, 'ci/ has no README');
    const root = await page(`${pathOf(pub.web_url)}/-/tree/main`);
    assert.match(
      root.body,
      /<h2 id="readme-name">README\.md<\/h2><\/header>\n<div class="markdown"><h1><a id="user-content-templates"/,
    );
    const blob = await page(`${pathOf(pub.web_url)}/-/blob/main/ci/deploy.yml`);
    assert.equal(blob.statusCode, 200);
    assert.match(blob.body, /<span class="hljs-attr">deploy:<\/span>/);
    for (const missing of [
      `${pathOf(pub.web_url)}/-/blob/main/ci/missing.yml`,
      `${pathOf(pub.web_url)}/-/tree/no-branch`,
    ])
      assertHiddenPage(await page(missing), missing, false);
  });

  it('a file over 1 MB is too large to display on its page, which links to it raw', async () => {
    await t.must('POST', `/projects/${pub.id}/repository/files/big.yml`, ROOT_TOKEN, {
      branch: 'main',
      content: 'key: value\n'.repeat(100_000),
      commit_message: 'big',
    });
    const blob = await page(`${pathOf(pub.web_url)}/-/blob/main/big.yml`);
    assert.equal(blob.statusCode, 200);
    const raw = `http://[^"]+/${pub.path_with_namespace}/-/raw/main/big\\.yml`;
    assert.match(
      blob.body,
      new RegExp(
        `<p class="too-large">This file is too large to display: it is larger than 1 MB\\. You can <a href="${raw}">view it raw</a> or <a href="${raw}\\?inline=false" download>download it</a> instead\\.</p>`,
      ),
    );
    assert.doesNotMatch(blob.body, /class="copy"/, 'nothing to copy: the page does not hold the text');
    assert.doesNotMatch(blob.body, /key: value/);
  });

  it("a branch holding / is the ref of the tree, blob and raw paths, as GitLab's ExtractsRef reads them", async () => {
    await t.must('POST', `/projects/${pub.id}/repository/branches`, ROOT_TOKEN, { branch: 'release/v1', ref: 'main' });
    await t.must('PUT', `/projects/${pub.id}/repository/files/${encodeURIComponent('ci/deploy.yml')}`, ROOT_TOKEN, {
      branch: 'release/v1',
      content: 'on the release',
      commit_message: 'release',
    });
    const web = pathOf(pub.web_url);
    const raw = await page(`${web}/-/raw/release/v1/ci/deploy.yml`);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'on the release');
    const blob = await page(`${web}/-/blob/release/v1/ci/deploy.yml`);
    assert.equal(blob.statusCode, 200);
    assert.match(blob.body, /<h2 id="file-1-name">ci\/deploy\.yml<\/h2><span class="meta">on release\/v1<\/span>/);
    const tree = await page(`${web}/-/tree/release/v1/ci`);
    assert.equal(tree.statusCode, 200);
    assert.ok(tree.body.includes(`href="${pub.web_url}/-/blob/release%2Fv1/ci/deploy.yml">deploy.yml</a>`));
    assert.equal((await page(`${web}/-/tree/release/v1`)).statusCode, 200);
    // No file after the ref, and a ref that is not there: not found (a visitor is asked to sign in).
    for (const path of [`${web}/-/blob/release/v1`, `${web}/-/raw/release/v2/ci/deploy.yml`])
      assertHiddenPage(await page(path), path, false);
  });
});

// A project's commit page (/<project>/-/commit/<sha>): the page the API's commits hand out as their web_url. Its
// message, author and id, and each file's diff against the first parent, which git itself is the oracle of; links
// to the parent commit and to each file's raw bytes, that open. What the API hides, the page hides.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const e = encodeURIComponent;
const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname;
const decode = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

describe('commit pages', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U;
  let guest: { id: number };
  let guestCookie: string;
  let P: number;
  let commits: any[];

  const page = (url: string, cookie?: string) =>
    t.request({ method: 'GET', url, token: null, headers: cookie ? { cookie } : {} });
  const git = async (...args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('project', P))!, ...args], { encoding: 'utf8' });
  const write = (method: string, path: string, content: string, message: string) =>
    t.ok(
      method,
      `/projects/${P}/repository/files/${e(path)}`,
      alice.token,
      { branch: 'main', content, commit_message: message },
      method === 'POST' ? 201 : 200,
    );

  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    guest = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'guest',
      email: 'guest@example.com',
      name: 'Guest',
      password: PASSWORD,
    });
    guestCookie = await signInCookie(t, 'guest', PASSWORD);
    P = (await t.ok('POST', '/projects', alice.token, { path: 'code', visibility: 'public' }, 201)).id;
    await write('POST', 'a.txt', 'one\ntwo\nthree\n', 'Add a');
    await write('POST', 'lib/b.js', 'let b = 1;\n', 'Add b');
    await write('PUT', 'a.txt', 'one\n2 <two>\nthree\nfour\n', 'Change a\n\nWith a body & more.');
    commits = await t.ok('GET', `/projects/${P}/repository/commits`, alice.token, undefined, 200);
  });
  after(() => t.close());

  it("every commit's web_url opens its page: message, author, id and each file's diff as git shows it", async () => {
    assert.equal(commits.length, 3);
    for (const c of commits) {
      const res = await page(pathOf(c.web_url));
      assert.equal(res.statusCode, 200, `${c.web_url}: ${res.body.slice(0, 300)}`);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.ok(res.body.includes(`<h1>${c.title}</h1>`), c.title);
      assert.ok(res.body.includes(`<code>${c.id}</code>`));
      assert.ok(res.body.includes(c.author_name));
      // The files git says the commit changed, each once, and their lines added and deleted as git counts them.
      const numstat = (await git('show', '--numstat', '--format=', c.id)).trim().split('\n');
      for (const line of numstat) {
        const [added, deleted, path] = line.split('\t');
        assert.ok(res.body.includes(`<code>${path}</code></h2>`), `${c.title}: ${path}`);
        assert.match(
          res.body,
          new RegExp(`<span class="plus">\\+${added}</span> <span class="minus">−${deleted}</span>`),
        );
      }
    }
    const last = await page(pathOf(commits[0].web_url));
    assert.ok(last.body.includes('<pre class="message">With a body &amp; more.</pre>'));
    // The changed line, escaped, as git's diff has it.
    assert.ok((await git('show', commits[0].id)).includes('+2 <two>'));
    assert.ok(decode(last.body.replace(/<[^>]*>/g, '')).includes('2 <two>'));
  });

  it("links to the parent commit's page and to each file's raw bytes at the commit, which open", async () => {
    const last = await page(pathOf(commits[0].web_url));
    const parentLink = `${commits[1].web_url}`;
    assert.ok(last.body.includes(`href="${parentLink}"`), 'parent link');
    assert.equal((await page(pathOf(parentLink))).statusCode, 200);
    const raws = [...last.body.matchAll(/<a href="([^"]*\/-\/raw\/[^"]*)">Raw/g)].map((m) => decode(m[1]));
    assert.equal(raws.length, 1);
    const raw = await page(pathOf(raws[0]));
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, await git('show', `${commits[0].id}:a.txt`));
    const first = await page(pathOf(commits[2].web_url));
    assert.ok(!first.body.includes('Parent commit'));
  });

  it("a project's commit page is hidden as its code is: a visitor of a private one signs in, a guest gets 404", async () => {
    const secret = (await t.ok('POST', '/projects', alice.token, { path: 'secret', visibility: 'private' }, 201)).id;
    await t.ok('POST', `/projects/${secret}/members`, alice.token, { user_id: guest.id, access_level: 10 }, 201);
    await t.ok(
      'POST',
      `/projects/${secret}/repository/files/x.txt`,
      alice.token,
      { branch: 'main', content: 'x', commit_message: 'x' },
      201,
    );
    const [c] = await t.ok('GET', `/projects/${secret}/repository/commits`, alice.token, undefined, 200);
    const token = (
      await t.must('POST', `/users/${guest.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'g', scopes: ['api'] })
    ).token;
    assert.equal((await t.api('GET', `/projects/${secret}/repository/commits/${c.id}`, token)).statusCode, 403);
    assertHiddenPage(await page(pathOf(c.web_url)), c.web_url, false);
    assertHiddenPage(await page(pathOf(c.web_url), guestCookie), c.web_url, true);
  });

  it('a commit id, branch or tag that names no commit is a 404 page', async () => {
    for (const ref of ['0'.repeat(40), 'nope', 'a..b']) {
      const res = await page(`/alice/code/-/commit/${ref}`, guestCookie);
      assertHiddenPage(res, `/alice/code/-/commit/${ref}`, true);
    }
    const byBranch = await page('/alice/code/-/commit/main');
    assert.equal(byBranch.statusCode, 200);
    assert.ok(byBranch.body.includes(`<code>${commits[0].id}</code>`));
  });
});

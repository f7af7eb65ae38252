// Finding one's way: the header's places (Explore, one's snippets, New snippet, the user menu, or Sign in
// with the way back), GitLab's /-/snippets, browser paths no page serves answered as HTML, and a wrong
// password that keeps the login typed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';

describe('navigation', () => {
  let t: TestApp;
  let cookie: string;
  const page = (url: string, c?: string) =>
    t.request({ method: 'GET', url, token: null, headers: c ? { cookie: c } : {} });

  before(async () => {
    t = await createTestApp();
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'erin',
      email: 'erin@example.com',
      name: 'Erin',
      password: PASSWORD,
    });
    cookie = await signInCookie(t, 'erin', PASSWORD);
  });
  after(() => t.close());

  it('the header offers a visitor Explore and Sign in, which brings them back to the page', async () => {
    const res = await page('/explore/snippets?page=2');
    assert.equal(res.statusCode, 200);
    assert.match(
      res.body,
      /<nav class="main-nav" aria-label="Main">\n<a href="\/explore\/snippets">Explore<\/a>\n<\/nav>\n<a class="account" href="\/users\/sign_in\?redirect_to=%2Fexplore%2Fsnippets%3Fpage%3D2">Sign in<\/a><\/header>/,
    );
  });

  it('the header offers someone signed in their snippets, a new snippet, and their menu', async () => {
    const res = await page('/explore/snippets', cookie);
    assert.match(
      res.body,
      /<a href="\/explore\/snippets">Explore<\/a>\n<a href="\/dashboard\/snippets">Your snippets<\/a>\n<a href="\/-\/snippets\/new">New snippet<\/a>/,
    );
    assert.match(res.body, /<details class="account user-menu"><summary>erin<\/summary>/);
    assert.match(res.body, /<a href="\/-\/user_settings\/personal_access_tokens">Access tokens<\/a>/);
    for (const href of ['/dashboard/snippets', '/-/snippets/new', '/-/user_settings/personal_access_tokens', '/erin'])
      assert.equal((await page(href, cookie)).statusCode, 200, href);
  });

  it("GitLab's /-/snippets leads to one's own snippets, or everyone's", async () => {
    const mine = await page('/-/snippets', cookie);
    assert.equal(mine.statusCode, 302);
    assert.equal(mine.headers.location, '/dashboard/snippets');
    const theirs = await page('/-/snippets');
    assert.equal(theirs.statusCode, 302);
    assert.equal(theirs.headers.location, '/explore/snippets');
  });

  it('a browser path no page serves is an HTML 404, or sign in for a visitor; the API keeps JSON', async () => {
    for (const path of ['/users/sign_out', '/-/no-such-page', '/a/b/-/nothing']) {
      assertHiddenPage(await page(path, cookie), path, true);
      assertHiddenPage(await page(path), path, false);
    }
    const api = await page('/api/v4/no-such-route');
    assert.equal(api.statusCode, 404);
    assert.deepEqual(JSON.parse(api.body), { error: '404 Not Found' });
  });

  it('a wrong password keeps the login typed', async () => {
    const form = await page('/users/sign_in');
    const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1];
    const res = await t.request({
      method: 'POST',
      url: '/users/sign_in',
      token: null,
      headers: { cookie: `_snippetd_sign_in=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ authenticity_token: token, login: 'erin <b>', password: 'wrong' }).toString(),
    });
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /<input name="login" value="erin &lt;b&gt;" autocomplete="username" required>/);
  });
});

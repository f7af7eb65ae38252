// With the Public level restricted (application settings), visitors who are not signed in see no user: GitLab's
// UserPolicy gives them no read_user and its GlobalPolicy no read_users_list, so the users API answers them 403
// and the profile pages send them to sign in, as the Explore pages do (Explore::ApplicationController
// authenticates unless Public is open). A public snippet
// or project at its own address stays open to them. Signed-in viewers see everything as before.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const NOT_LISTED = { message: '403 Forbidden - Not authorized to access /api/v4/users' };

describe('the Public level restricted', () => {
  let t: TestApp;
  let alice: { id: number };
  let snippet: { id: number; web_url: string };
  let cookie: string;
  let token: string;
  const page = (path: string, signedIn = false) =>
    t.request({ method: 'GET', url: path, token: null, headers: signedIn ? { cookie } : {} });
  const restrict = (levels: string[]) =>
    t.must('PUT', '/application/settings', ROOT_TOKEN, { restricted_visibility_levels: levels });
  const profilePages = ['/alice', '/users/alice/snippets', '/explore/snippets'];

  before(async () => {
    t = await createTestApp();
    alice = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      password: PASSWORD,
    });
    token = (
      await t.must('POST', `/users/${alice.id}/personal_access_tokens`, ROOT_TOKEN, { name: 't', scopes: ['api'] })
    ).token;
    snippet = await t.must('POST', '/snippets', token, {
      title: 'open note',
      visibility: 'public',
      files: [{ file_path: 'a.txt', content: 'hello' }],
    });
    cookie = await signInCookie(t, 'alice', PASSWORD);
  });
  after(() => t.close());

  const lookUp = () => t.api('GET', '/users?username=alice', null);

  it('visitors see users and Explore while Public is open', async () => {
    const found = await lookUp();
    assert.equal(found.statusCode, 200);
    assert.deepEqual(
      found.json.map((u: { id: number }) => u.id),
      [alice.id],
    );
    for (const path of profilePages) {
      const res = await page(path);
      assert.equal(res.statusCode, 200, path);
      assert.ok(res.body.includes('open note'), path);
    }
  });

  it('restricted: the users API answers visitors 403, and the profile and Explore pages send them to sign in', async () => {
    await restrict(['public']);
    const anonymous = await lookUp();
    assert.equal(anonymous.statusCode, 403);
    assert.deepEqual(anonymous.json, NOT_LISTED);
    for (const path of profilePages) assertHiddenPage(await page(path), path, false);
    // Signed in, by token or on the pages, nothing changes.
    const signedIn = await t.api('GET', `/users/${alice.id}`, token);
    assert.equal(signedIn.statusCode, 200);
    assert.equal(signedIn.json.username, 'alice');
    for (const path of profilePages) {
      const res = await page(path, true);
      assert.equal(res.statusCode, 200, path);
      assert.ok(res.body.includes('open note'), path);
    }
    // The public snippet itself stays open to visitors, by the API and by its page.
    assert.equal((await t.api('GET', `/snippets/${snippet.id}`, null)).statusCode, 200);
    const snippetPage = await page(new URL(snippet.web_url).pathname);
    assert.equal(snippetPage.statusCode, 200);
    assert.ok(snippetPage.body.includes('open note'));
  });

  it('open again: visitors see users and Explore at once', async () => {
    await restrict([]);
    assert.equal((await lookUp()).statusCode, 200);
    for (const path of profilePages) assert.equal((await page(path)).statusCode, 200, path);
  });
});

// Issue 17, "every input gets GitLab's answer, never a 500": one named regression test per class of input
// that once answered 500 (on PostgreSQL, SQLite or both). Each asserts the whole answer a client sees.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BEYOND_INTEGER = '2147483648'; // PostgreSQL's integer ends at 2147483647
const THIRTY_DIGITS = '123456789012345678901234567890'; // past any JavaScript integer, too
const BELOW_INTEGER = '-2147483649';
const OUT_OF_RANGE = [BEYOND_INTEGER, THIRTY_DIGITS, BELOW_INTEGER];

const rootBasic = `Basic ${Buffer.from(`root:${ROOT_TOKEN}`).toString('base64')}`;
const GIT_NOT_FOUND = "The project you were looking for could not be found or you don't have permission to view it.\n";

describe('never a 500', () => {
  let t: TestApp;
  let groupId: number;
  let projectId: number;
  let snippetId: number;
  before(async () => {
    t = await createTestApp();
    groupId = (await t.must('POST', '/groups', ROOT_TOKEN, { name: 'g', path: 'g', visibility: 'public' })).id;
    projectId = (
      await t.must('POST', '/projects', ROOT_TOKEN, {
        path: 'p',
        namespace_id: groupId,
        visibility: 'public',
        initialize_with_readme: true,
      })
    ).id;
    snippetId = (
      await t.must('POST', `/projects/${projectId}/snippets`, ROOT_TOKEN, {
        title: 't',
        visibility: 'public',
        files: [{ file_path: 'a.rb', content: 'puts 1' }],
      })
    ).id;
  });
  after(() => t.close());

  it('an id beyond the id columns’ range is an id that does not exist, on every route and both databases', async () => {
    for (const id of OUT_OF_RANGE) {
      const p = `/projects/${projectId}`;
      await t.fails('GET', `/projects/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Project Not Found' });
      await t.fails('GET', `/groups/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Group Not Found' });
      await t.fails('GET', `/users/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 User Not Found' });
      await t.fails('PUT', `/users/${id}`, ROOT_TOKEN, { name: 'x' }, 404, { message: '404 User Not Found' });
      await t.fails('GET', `${p}/snippets/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Not found' });
      await t.fails('GET', `${p}/snippets/${id}/raw`, ROOT_TOKEN, undefined, 404, { message: '404 Snippet Not Found' });
      await t.fails('GET', `${p}/snippets/${id}/files/main/a.rb/raw`, ROOT_TOKEN, undefined, 404, {
        message: '404 Snippet Not Found',
      });
      await t.fails('GET', `${p}/members/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Member Not Found' });
      await t.fails('GET', `/groups/${groupId}/members/${id}`, ROOT_TOKEN, undefined, 404, {
        message: '404 Member Not Found',
      });
      await t.fails('POST', `${p}/members`, ROOT_TOKEN, { user_id: id, access_level: 30 }, 404, {
        message: '404 User Not Found',
      });
      await t.fails('GET', `/personal_access_tokens/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Not found' });
      await t.fails('DELETE', `/personal_access_tokens/${id}`, ROOT_TOKEN, undefined, 404, { message: '404 Not found' });
      await t.fails('POST', `/users/${id}/personal_access_tokens`, ROOT_TOKEN, { name: 'x', scopes: ['api'] }, 404, {
        message: '404 User Not Found',
      });
      await t.fails('POST', `/projects/user/${id}`, ROOT_TOKEN, { path: 'z' }, 404, { message: '404 User Not Found' });
      assert.deepEqual(await t.ok('GET', `/personal_access_tokens?user_id=${id}`, ROOT_TOKEN, undefined, 200), []);
      await t.fails('POST', '/projects', ROOT_TOKEN, { path: 'q', namespace_id: id }, 400, {
        message: { namespace: ['is not valid'] },
      });
      await t.fails('POST', '/groups', ROOT_TOKEN, { name: 'x', path: 'x', parent_id: id }, 404, {
        message: '404 Group Not Found',
      });
      await t.fails('PUT', '/application/settings', ROOT_TOKEN, { file_template_project_id: id }, 400, {
        message: { file_template_project_id: ['is invalid'] },
      });
      await t.fails('PUT', `/groups/${groupId}`, ROOT_TOKEN, { file_template_project_id: id }, 400, {
        message: { file_template_project_id: ['is invalid'] },
      });
      const sudo = await t.api('GET', '/user', ROOT_TOKEN, undefined, { sudo: id });
      assert.deepEqual([sudo.statusCode, sudo.json], [404, { message: `404 User with ID or username '${id}' Not Found` }]);

      // The web pages and git over HTTP look snippets up by the same rule.
      for (const page of [`/g/p/-/snippets/${id}`, `/g/p/-/snippets/${id}/raw`, `/g/p/-/snippets/${id}.js`]) {
        const res = await t.request({ method: 'GET', url: page, token: null });
        assert.equal(res.statusCode, 404, `${page}: ${res.body.slice(0, 200)}`);
      }
      const git = await t.request({
        method: 'GET',
        url: `/g/p/snippets/${id}.git/info/refs?service=git-upload-pack`,
        token: null,
        headers: { authorization: rootBasic },
      });
      assert.deepEqual([git.statusCode, git.body], [404, GIT_NOT_FOUND]);
    }
    // A page of a list "before" an id past every id is the newest page.
    const older = await t.request({ method: 'GET', url: `/explore/snippets?before=${BEYOND_INTEGER}0`, token: null });
    assert.equal(older.statusCode, 200);
    assert.match(older.body, /href="[^"]*\/g\/p\/-\/snippets\/\d+">t</);
    // Not a whole number at all is still Grape's 400.
    await t.fails('GET', `/projects/${projectId}/snippets/1.5`, ROOT_TOKEN, undefined, 400, {
      error: 'snippet_id is invalid',
    });
  });
});

// Template answers are kept whole per caller and URL (src/http/kept-answers.ts). A kept answer stands for
// the project lookup, the permission check and the template search, never for parameter checks: these
// run on every request, before the kept answer is looked up.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

describe('kept template answers', () => {
  let t: TestApp;
  let id: number;

  before(async () => {
    t = await createTestApp();
    id = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'kept', visibility: 'public' }, 201)).id;
  });
  after(() => t.close());

  /** Asks twice, so that the second answer is the kept one. */
  const keptTwice = async (url: string) => {
    const first = await t.api('GET', url, null);
    assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
    const second = await t.api('GET', url, null);
    assert.equal(second.body, first.body, url);
    return first.body;
  };

  it('an invalid parameter is 400 even when the answer without it is kept', async () => {
    const cases: [kept: string, invalid: string, error: string][] = [
      [`/projects/${id}/templates/licenses/mit`, '?fullname[]=Jane', 'fullname is invalid'],
      [
        `/projects/${id}/templates/licenses/mit`,
        '?source_template_project_id=abc',
        'source_template_project_id is invalid',
      ],
      [`/projects/${id}/templates/dockerfiles/Node`, '?project[a]=b', 'project is invalid'],
      [`/projects/${id}/templates/gitignores`, '?per_page=0', 'per_page has a value not allowed'],
      [`/projects/${id}/templates/gitignores`, '?page=abc', 'page is invalid'],
      ['/templates/licenses/mit', '?fullname[]=Jane', 'fullname is invalid'],
      ['/templates/gitignores', '?per_page=0', 'per_page has a value not allowed'],
    ];
    for (const [url, invalid, error] of cases) {
      const body = await keptTwice(url);
      const refused = await t.api('GET', `${url}${invalid}`, null);
      assert.equal(refused.statusCode, 400, `${url}${invalid}: ${refused.body}`);
      assert.deepEqual(refused.json, { error }, `${url}${invalid}`);
      assert.equal((await t.api('GET', url, null)).body, body, `${url} is still answered from what was kept`);
    }
  });

  it('a traversal in the name is 400 whatever was kept for other names', async () => {
    await keptTwice(`/projects/${id}/templates/gitignores/Ruby`);
    const res = await t.api('GET', `/projects/${id}/templates/gitignores/%2e%2e%2fRuby`, null);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'name should be a valid file path' });
  });

  it("a kept answer is the caller's own: another caller's permission is checked again", async () => {
    const priv = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'kept-private', visibility: 'private' }, 201)).id;
    const url = `/projects/${priv}/templates/dockerfiles/Node`;
    await t.ok('GET', url, ROOT_TOKEN, undefined, 200);
    await t.ok('GET', url, ROOT_TOKEN, undefined, 200);
    assert.deepEqual(await t.ok('GET', url, null, undefined, 404), { message: '404 Project Not Found' });
  });
});

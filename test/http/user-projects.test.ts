// GET /users/:user_id/projects (docs/gitlab-compatibility.md#projects): the projects in a user's namespace that
// the caller can see, with GET /projects's filters, each as GET /projects answers it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

describe('GET /users/:user_id/projects', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, bob: U;
  const made: Record<string, { id: number }> = {};

  before(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
    for (const [name, visibility] of [
      ['open', 'public'],
      ['inside', 'internal'],
      ['hidden', 'private'],
    ])
      made[name] = await t.ok('POST', '/projects', alice.token, { name, visibility }, 201);
    const group = await t.ok('POST', '/groups', alice.token, { name: 'team', path: 'team', visibility: 'public' }, 201);
    made.team = await t.ok(
      'POST',
      '/projects',
      alice.token,
      { name: 'elsewhere', namespace_id: group.id, visibility: 'public' },
      201,
    );
    made.bobs = await t.ok('POST', '/projects', bob.token, { name: 'bobs', visibility: 'public' }, 201);
  });
  after(() => t.close());

  const names = async (user: string, query: string, token: string | null) => {
    const res = await t.request({ method: 'GET', url: `/api/v4/users/${user}/projects?${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json.map((p: { name: string }) => p.name);
  };

  it("lists the projects in the user's own namespace the caller can see, newest first, by id or username", async () => {
    assert.deepEqual(await names('alice', '', alice.token), ['hidden', 'inside', 'open']);
    assert.deepEqual(await names(String(alice.id), '', bob.token), ['inside', 'open']);
    assert.deepEqual(await names('alice', '', null), ['open']);
    assert.deepEqual(await names('alice', '', ROOT_TOKEN), ['hidden', 'inside', 'open']);
    assert.deepEqual(await names('bob', '', alice.token), ['bobs']);
  });

  it("takes GET /projects's filters and order, and answers each project as GET /projects does", async () => {
    assert.deepEqual(await names('alice', 'order_by=name&sort=asc', alice.token), ['hidden', 'inside', 'open']);
    assert.deepEqual(await names('alice', 'visibility=internal', alice.token), ['inside']);
    assert.deepEqual(await names('alice', 'search=ope', bob.token), ['open']);
    // GitLab's PersonalProjectsFinder: owned and membership say nothing of a user's own projects.
    assert.deepEqual(await names('alice', 'owned=true', bob.token), ['inside', 'open']);
    assert.deepEqual(await names('alice', 'membership=true', bob.token), ['inside', 'open']);
    assert.deepEqual(await names('alice', 'min_access_level=10', bob.token), []);
    const res = await t.request({ method: 'GET', url: '/api/v4/users/alice/projects?per_page=1', token: alice.token });
    assert.equal(res.headers['x-total'], '3');
    const all = await t.ok('GET', '/projects?per_page=100', alice.token, undefined, 200);
    assert.deepEqual(
      res.json[0],
      all.find((p: { id: number }) => p.id === made.hidden.id),
    );
  });

  it('is 404 User Not Found for no such user, and 400 for a value GitLab does not take', async () => {
    for (const user of ['nobody', '999999']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/users/${user}/projects`, token: alice.token });
      assert.deepEqual([res.statusCode, res.json], [404, { message: '404 User Not Found' }], user);
    }
    const bad = await t.request({
      method: 'GET',
      url: '/api/v4/users/alice/projects?visibility=secret',
      token: alice.token,
    });
    assert.deepEqual([bad.statusCode, bad.json], [400, { error: 'visibility does not have a valid value' }]);
  });
});

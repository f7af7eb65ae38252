// GET /namespaces and GET /namespaces/:id (docs/gitlab-compatibility.md#namespaces): a user's own namespace and the
// groups they are a member of themselves, every namespace for an administrator, and each as GitLab's Namespace
// entity. The oracle is the table of memberships the test makes, read by GitLab's User#namespaces.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const NOT_FOUND = { message: '404 Namespace Not Found' };

interface Ns {
  id: number;
  name: string;
  path: string;
  kind: string;
  full_path: string;
  parent_id: number | null;
  members_count_with_descendants?: number;
}

describe('namespaces API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, bob: U;
  const ns: Record<string, Ns> = {};

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    bob = await t.user('bob');
    const group = async (key: string, token: string, extra: Record<string, unknown> = {}) => {
      const path = key.split('/').pop()!;
      const made = await t.ok('POST', '/groups', token, { name: `Group ${path}`, path, ...extra }, 201);
      ns[key] = { ...made, kind: 'group' };
    };
    await group('g1', alice.token, { visibility: 'private' });
    await group('g1/sub', ROOT_TOKEN, { parent_id: ns.g1.id, visibility: 'private' });
    await group('g2', ROOT_TOKEN, { visibility: 'private' });
    await group('g3', ROOT_TOKEN, { visibility: 'public' });
    await t.ok('POST', `/groups/${ns.g2.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 30 }, 201);
    await t.ok('POST', `/groups/${ns['g1/sub'].id}/members`, ROOT_TOKEN, { user_id: bob.id, access_level: 10 }, 201);
    for (const user of ['root', 'alice', 'bob'])
      ns[user] = (await t.ok('GET', `/namespaces/${user}`, ROOT_TOKEN, undefined, 200)) as Ns;
  });
  after(() => t.close());

  const list = async (query: string, token: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v4/namespaces?per_page=100&${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json as Ns[];
  };
  const keys = async (query: string, token: string) =>
    (await list(query, token)).map((n) => Object.keys(ns).find((k) => ns[k].id === n.id));
  const byId = (...wanted: string[]) => wanted.sort((a, b) => ns[a].id - ns[b].id);

  it('gives a user their own namespace and the groups they are a member of themselves, by id', async () => {
    // Not g1/sub: alice's access there is g1's, and GitLab's User#namespaces takes direct memberships only.
    assert.deepEqual(await keys('', alice.token), byId('alice', 'g1', 'g2'));
    assert.deepEqual(await keys('owned_only=true', alice.token), byId('alice', 'g1'));
    assert.deepEqual(await keys('', bob.token), byId('bob', 'g1/sub'));
    assert.deepEqual(await keys('top_level_only=true', bob.token), ['bob']);
  });

  it('gives an administrator every namespace; search looks at the name and the path, or the full path', async () => {
    assert.deepEqual(await keys('', ROOT_TOKEN), byId(...Object.keys(ns)));
    assert.deepEqual(await keys('owned_only=true', ROOT_TOKEN), byId(...Object.keys(ns)));
    assert.deepEqual(
      await keys('top_level_only=true', ROOT_TOKEN),
      byId(...Object.keys(ns).filter((k) => k !== 'g1/sub')),
    );
    assert.deepEqual(await keys('search=SUB', ROOT_TOKEN), ['g1/sub']);
    assert.deepEqual(await keys('search=g1', ROOT_TOKEN), ['g1']);
    assert.deepEqual(await keys('search=g1/s&full_path_search=true', ROOT_TOKEN), ['g1/sub']);
    // With full_path_search, the full name too (GitLab's route name: "Group g1 / Group sub").
    assert.deepEqual(await keys('search=Group%20g1&full_path_search=true', ROOT_TOKEN), byId('g1', 'g1/sub'));
    assert.deepEqual(await keys('search=Group%20g1', ROOT_TOKEN), ['g1']);
    assert.deepEqual(await keys('search=Group%20g', alice.token), byId('g1', 'g2'));
  });

  it("answers GitLab's Namespace entity, with members_count_with_descendants for a group its caller administers", async () => {
    const mine = await list('', alice.token);
    const g1 = mine.find((n) => n.id === ns.g1.id)!;
    // g1: alice (its owner); g1/sub below it: root (its creator) and bob.
    assert.deepEqual(g1, {
      id: ns.g1.id,
      name: 'Group g1',
      path: 'g1',
      kind: 'group',
      full_path: 'g1',
      parent_id: null,
      avatar_url: null,
      web_url: `${BASE}/groups/g1`,
      members_count_with_descendants: 3,
    });
    // A developer of g2 administers nothing there.
    assert.ok(!('members_count_with_descendants' in mine.find((n) => n.id === ns.g2.id)!));
    assert.deepEqual(
      mine.find((n) => n.id === ns.alice.id),
      {
        id: ns.alice.id,
        name: 'ALICE',
        path: 'alice',
        kind: 'user',
        full_path: 'alice',
        parent_id: null,
        avatar_url: null,
        web_url: `${BASE}/alice`,
      },
    );
    const all = await list('', ROOT_TOKEN);
    assert.equal(all.find((n) => n.id === ns['g1/sub'].id)!.members_count_with_descendants, 2);
    assert.equal(all.find((n) => n.id === ns.g3.id)!.members_count_with_descendants, 1);
    // Active members only, as GitLab's users_with_descendants: blocked, bob is not counted.
    await t.ok('POST', `/users/${bob.id}/block`, ROOT_TOKEN, undefined, 201);
    try {
      const g1Now = (await t.ok('GET', `/namespaces/${ns.g1.id}`, alice.token, undefined, 200)) as Ns;
      assert.equal(g1Now.members_count_with_descendants, 2);
    } finally {
      await t.ok('POST', `/users/${bob.id}/unblock`, ROOT_TOKEN, undefined, 201);
    }
  });

  it('GET /namespaces/:id: by id or full path in any case, for its owner or a member (or of a group above)', async () => {
    for (const [id, token] of [
      [String(ns.g1.id), alice.token],
      ['G1', alice.token],
      ['g1%2Fsub', alice.token],
      ['alice', alice.token],
      [String(ns.g2.id), alice.token],
      ['g3', ROOT_TOKEN],
      ['bob', ROOT_TOKEN],
    ]) {
      const res = await t.request({ method: 'GET', url: `/api/v4/namespaces/${id}`, token });
      assert.equal(res.statusCode, 200, `${id}: ${res.body}`);
      const listed = (await list('', token)).find((n) => n.id === res.json.id);
      if (listed) assert.deepEqual(res.json, listed, id);
    }
    // A public group nobody made her a member of, another user's namespace, and none at all: 404.
    for (const id of ['g3', 'bob', String(ns.bob.id), '999999', 'nowhere']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/namespaces/${id}`, token: alice.token });
      assert.deepEqual([res.statusCode, res.json], [404, NOT_FOUND], id);
    }
  });

  it('is for those signed in: 401 for a visitor; 400 for a value Grape does not take', async () => {
    for (const url of ['/api/v4/namespaces', `/api/v4/namespaces/${ns.g3.id}`]) {
      const res = await t.request({ method: 'GET', url, token: null });
      assert.deepEqual([res.statusCode, res.json], [401, { message: '401 Unauthorized' }], url);
    }
    const bad = await t.request({ method: 'GET', url: '/api/v4/namespaces?owned_only=maybe', token: alice.token });
    assert.deepEqual([bad.statusCode, bad.json], [400, { error: 'owned_only is invalid' }]);
  });
});

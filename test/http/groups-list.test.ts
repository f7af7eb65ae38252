// GET /groups and GET /groups/:id/projects (docs/gitlab-compatibility.md#groups): which groups GitLab's
// GroupsFinder gives each caller, its filters, order and pages, and a group's projects. The oracle is a table of
// each group's visibility and each user's memberships, read by the rules GitLab's finder states, not by the query.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';

interface Made {
  id: number;
  name: string;
  path: string;
  full_path: string;
  visibility: string;
}

describe('GET /groups', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, bob: U;
  const groups: Record<string, Made> = {};

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    bob = await t.user('bob', { external: true });
    const make = async (key: string, name: string, visibility: string, parent?: string, token = ROOT_TOKEN) => {
      const path = key.split('/').pop()!;
      const payload = { name, path, visibility, ...(parent && { parent_id: groups[parent].id }) };
      groups[key] = await t.ok('POST', '/groups', token, payload, 201);
    };
    await make('zpub', 'Zeta public', 'public');
    await make('int', 'Internal things', 'internal');
    await make('priv', 'Private one', 'private');
    await make('priv/child', 'A child', 'private', 'priv');
    await make('priv/child/deep', 'Deep child', 'private', 'priv/child');
    await make('priv2', 'Private two', 'private');
    await make('priv2/sub', 'Sub of two', 'private', 'priv2');
    await make('priv2/sibling', 'Sibling', 'private', 'priv2');
    await make('secret', 'Secret', 'private');
    await make('mine', 'Mine', 'private', undefined, alice.token);
    // Alice is a member of a project in pgrp/inner only: GitLab lists that group and the groups above it.
    await make('pgrp', 'Project parent', 'private');
    await make('pgrp/inner', 'Inner', 'private', 'pgrp');
    const project = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { name: 'tool', namespace_id: groups['pgrp/inner'].id },
      201,
    );
    await t.ok('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 20 }, 201);
    const member = (key: string, user: U, level: number) =>
      t.ok('POST', `/groups/${groups[key].id}/members`, ROOT_TOKEN, { user_id: user.id, access_level: level }, 201);
    await member('priv', alice, 10);
    await member('priv2/sub', alice, 30);
    await member('priv2/sub', bob, 10);
  });
  after(() => t.close());

  const list = async (query: string, token: string | null, below = '') => {
    const url = below
      ? `/api/v4/groups/${groupPath(below)}?per_page=100&${query}`
      : `/api/v4/groups?per_page=100&${query}`;
    const res = await t.request({ method: 'GET', url, token });
    assert.equal(res.statusCode, 200, res.body);
    return res;
  };
  /** `priv/subgroups` as the group's id and what follows it. */
  const groupPath = (below: string) => {
    const at = below.lastIndexOf('/');
    const key = below.slice(0, at);
    return `${groups[key]?.id ?? key}${below.slice(at)}`;
  };
  const keys = async (query: string, token: string | null, below = '') =>
    (await list(query, token, below)).json.map((g: Made) => Object.keys(groups).find((k) => groups[k].id === g.id));
  /** The groups, by name then id, as GitLab's default order_by=name&sort=asc. */
  const byName = (...wanted: string[]) =>
    wanted.sort((a, b) => groups[a].name.localeCompare(groups[b].name, 'en') || groups[a].id - groups[b].id);

  it('a visitor gets the public groups; with owned=true none', async () => {
    assert.deepEqual(await keys('', null), ['zpub']);
    assert.deepEqual(await keys('owned=true', null), []);
    assert.deepEqual(await keys('min_access_level=10', null), ['zpub']);
  });

  it('a user gets the groups of their memberships, the groups below them and the groups above them', async () => {
    // priv: a member; priv/child and priv/child/deep: below it; priv2: above priv2/sub, where a member; mine: owner.
    const mineAndAround = ['priv', 'priv/child', 'priv/child/deep', 'priv2', 'priv2/sub', 'mine', 'pgrp', 'pgrp/inner'];
    assert.deepEqual(await keys('', alice.token), byName(...mineAndAround));
    assert.deepEqual(await keys('all_available=false', alice.token), byName(...mineAndAround));
    // With all_available, also every group their visibility lets them see.
    assert.deepEqual(await keys('all_available=true', alice.token), byName(...mineAndAround, 'zpub', 'int'));
    // An external user sees no internal group.
    assert.deepEqual(await keys('all_available=true', bob.token), byName('priv2', 'priv2/sub', 'zpub'));
    // Every group listed can be read on its own.
    for (const key of mineAndAround) {
      const one = await t.request({ method: 'GET', url: `/api/v4/groups/${groups[key].id}`, token: alice.token });
      assert.equal(one.statusCode, 200, key);
    }
  });

  it('owned=true and min_access_level give the groups of memberships at that level, and the groups below', async () => {
    assert.deepEqual(await keys('owned=true', alice.token), ['mine']);
    assert.deepEqual(await keys('min_access_level=30', alice.token), byName('priv2/sub', 'mine'));
    assert.deepEqual(
      await keys('min_access_level=10', alice.token),
      byName('priv', 'priv/child', 'priv/child/deep', 'priv2/sub', 'mine'),
    );
    assert.deepEqual(await keys('min_access_level=50', bob.token), []);
  });

  it('an administrator gets every group, or with all_available=false those of their memberships', async () => {
    const all = Object.keys(groups);
    assert.deepEqual(await keys('', ROOT_TOKEN), byName(...all));
    // Root made every group but alice's, and so owns them.
    assert.deepEqual(await keys('all_available=false', ROOT_TOKEN), byName(...all.filter((k) => k !== 'mine')));
    assert.deepEqual(await keys('owned=true', ROOT_TOKEN), byName(...all.filter((k) => k !== 'mine')));
  });

  it('filters by search (name or full path), skip_groups, top_level_only and visibility', async () => {
    assert.deepEqual(await keys('search=CHILD', alice.token), byName('priv/child', 'priv/child/deep'));
    assert.deepEqual(await keys('search=priv2/s', ROOT_TOKEN), byName('priv2/sub', 'priv2/sibling'));
    assert.deepEqual(
      await keys(`skip_groups[]=${groups.priv.id}&skip_groups[]=${groups.mine.id}`, alice.token),
      byName('priv/child', 'priv/child/deep', 'priv2', 'priv2/sub', 'pgrp', 'pgrp/inner'),
    );
    // Apart by commas; an id no group can have skips nothing (PostgreSQL's integer refused it: a 500).
    assert.deepEqual(
      await keys(`skip_groups=${groups.priv.id},${groups.mine.id},9999999999,${groups.mine.id}`, alice.token),
      byName('priv/child', 'priv/child/deep', 'priv2', 'priv2/sub', 'pgrp', 'pgrp/inner'),
    );
    assert.deepEqual(await keys('top_level_only=true', alice.token), byName('priv', 'priv2', 'mine', 'pgrp'));
    assert.deepEqual(await keys('visibility=internal&all_available=true', alice.token), ['int']);
  });

  it('orders by name, path or id, either way, then by id', async () => {
    const all = Object.keys(groups);
    const by = (field: 'path' | 'id', desc: boolean) =>
      [...all].sort((a, b) => {
        const [x, y] = [groups[a][field], groups[b][field]];
        const order = typeof x === 'number' ? x - (y as number) : String(x).localeCompare(String(y), 'en');
        return (desc ? -order : order) || groups[a].id - groups[b].id;
      });
    assert.deepEqual(await keys('order_by=id', ROOT_TOKEN), by('id', false));
    assert.deepEqual(await keys('order_by=id&sort=desc', ROOT_TOKEN), by('id', true));
    assert.deepEqual(await keys('order_by=path&sort=desc', ROOT_TOKEN), by('path', true));
    assert.deepEqual(await keys('sort=desc', ROOT_TOKEN), byName(...all).reverse());
    // Similarity orders by name here, as GitLab does without a search.
    assert.deepEqual(await keys('order_by=similarity', ROOT_TOKEN), byName(...all));
  });

  it('answers each group as GET /groups/:id does, in pages with their headers', async () => {
    const res = await t.request({
      method: 'GET',
      url: '/api/v4/groups?per_page=2&page=2&order_by=id',
      token: alice.token,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-total'], '8');
    assert.equal(res.headers['x-total-pages'], '4');
    assert.equal(res.headers['x-page'], '2');
    assert.equal(res.headers['x-per-page'], '2');
    const ids = [
      groups.priv.id,
      groups['priv/child'].id,
      groups['priv/child/deep'].id,
      groups.priv2.id,
      groups['priv2/sub'].id,
      groups.mine.id,
      groups.pgrp.id,
      groups['pgrp/inner'].id,
    ].sort((a, b) => a - b);
    assert.deepEqual(
      res.json.map((g: Made) => g.id),
      ids.slice(2, 4),
    );
    for (const g of res.json) {
      const one = await t.request({ method: 'GET', url: `/api/v4/groups/${g.id}`, token: alice.token });
      assert.deepEqual(g, one.json);
    }
    assert.equal(res.json[0].web_url, `${BASE}/groups/${res.json[0].full_path}`);
  });

  it('GET /groups/:id/subgroups and /descendant_groups: the same groups, of those inside the group', async () => {
    assert.deepEqual(await keys('', alice.token, 'priv/subgroups'), ['priv/child']);
    assert.deepEqual(await keys('', alice.token, 'priv/descendant_groups'), byName('priv/child', 'priv/child/deep'));
    // Of priv2, alice is a member of priv2/sub only; priv2/sibling is private and none of hers.
    assert.deepEqual(await keys('all_available=true', alice.token, 'priv2/subgroups'), ['priv2/sub']);
    assert.deepEqual(await keys('', ROOT_TOKEN, 'priv2/subgroups'), byName('priv2/sub', 'priv2/sibling'));
    assert.deepEqual(await keys('search=deep', ROOT_TOKEN, 'priv/descendant_groups'), ['priv/child/deep']);
    // Inside a group, GitLab searches the groups' own paths, not their full paths.
    assert.deepEqual(await keys('search=priv', ROOT_TOKEN, 'priv/descendant_groups'), []);
    assert.deepEqual(await keys('', null, 'zpub/subgroups'), []);
    for (const path of ['secret/subgroups', 'secret/descendant_groups', '999999/subgroups']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/groups/${path}`, token: alice.token });
      assert.equal(res.statusCode, 404, path);
      assert.deepEqual(res.json, { message: '404 Group Not Found' });
    }
  });

  it('checks the parameters before the group, as Grape does: 400 for a hidden group with a bad one', async () => {
    for (const url of ['secret/subgroups?sort=up', 'secret/descendant_groups?sort=up', 'secret/projects?sort=up']) {
      const res = await t.request({
        method: 'GET',
        url: `/api/v4/groups/${groups.secret.id}/${url.split('/')[1]}`,
        token: alice.token,
      });
      assert.deepEqual([res.statusCode, res.json], [400, { error: 'sort does not have a valid value' }], url);
    }
  });

  it("answers Grape's 400 for values it does not take", async () => {
    for (const [query, error] of [
      ['order_by=stars', 'order_by does not have a valid value'],
      ['sort=up', 'sort does not have a valid value'],
      ['min_access_level=15', 'min_access_level does not have a valid value'],
      ['visibility=secret', 'visibility does not have a valid value'],
      ['skip_groups[]=x', 'skip_groups is invalid'],
      ['all_available=maybe', 'all_available is invalid'],
    ]) {
      const res = await t.request({ method: 'GET', url: `/api/v4/groups?${query}`, token: alice.token });
      assert.equal(res.statusCode, 400, query);
      assert.deepEqual(res.json, { error }, query);
    }
  });
});

describe('GET /groups/:id/projects', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U;
  let top: Made, sub: Made, hidden: Made;
  const projects: Record<string, { id: number; name: string; created_at: string; path: string }> = {};

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    top = await t.ok('POST', '/groups', ROOT_TOKEN, { name: 'Top', path: 'top', visibility: 'public' }, 201);
    sub = await t.ok(
      'POST',
      '/groups',
      ROOT_TOKEN,
      { name: 'Sub', path: 'sub', visibility: 'public', parent_id: top.id },
      201,
    );
    hidden = await t.ok('POST', '/groups', ROOT_TOKEN, { name: 'Hidden', path: 'hidden', visibility: 'private' }, 201);
    const make = async (key: string, namespace: Made, visibility: string, extra: Record<string, unknown> = {}) => {
      const payload = { name: key, path: key.toLowerCase(), namespace_id: namespace.id, visibility, ...extra };
      projects[key] = await t.ok('POST', '/projects', ROOT_TOKEN, payload, 201);
    };
    await make('Beta', top, 'public', { description: 'templates here' });
    await make('Alpha', top, 'internal');
    await make('Gamma', top, 'private');
    await make('Delta', sub, 'public');
    await make('Epsilon', hidden, 'private');
    await t.ok(
      'POST',
      `/projects/${projects.Gamma.id}/members`,
      ROOT_TOKEN,
      { user_id: alice.id, access_level: 40 },
      201,
    );
  });
  after(() => t.close());

  const names = async (group: Made | string, query: string, token: string | null) => {
    const id = typeof group === 'string' ? group : group.id;
    const res = await t.request({ method: 'GET', url: `/api/v4/groups/${id}/projects?${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json.map((p: { name: string }) => p.name);
  };
  /** GitLab's default order: created_at descending, then id. */
  const newestFirst = (...keys: string[]) => keys.sort((a, b) => projects[b].id - projects[a].id);

  it("lists the group's projects the caller can see, newest first", async () => {
    assert.deepEqual(await names(top, '', null), ['Beta']);
    assert.deepEqual(await names(top, '', alice.token), newestFirst('Beta', 'Alpha', 'Gamma'));
    assert.deepEqual(await names('top', '', ROOT_TOKEN), newestFirst('Beta', 'Alpha', 'Gamma'));
    assert.deepEqual(await names(sub, '', alice.token), ['Delta']);
  });

  it('include_subgroups adds the projects of the groups below; filters and order as GET /projects', async () => {
    assert.deepEqual(
      await names(top, 'include_subgroups=true', alice.token),
      newestFirst('Beta', 'Alpha', 'Gamma', 'Delta'),
    );
    assert.deepEqual(await names(top, 'include_subgroups=true&order_by=name&sort=asc', alice.token), [
      'Alpha',
      'Beta',
      'Delta',
      'Gamma',
    ]);
    assert.deepEqual(await names(top, 'order_by=similarity&sort=desc', alice.token), ['Alpha', 'Beta', 'Gamma']);
    assert.deepEqual(await names(top, 'search=templates', alice.token), ['Beta']);
    assert.deepEqual(await names(top, 'visibility=internal', alice.token), ['Alpha']);
    assert.deepEqual(await names(top, 'min_access_level=40', alice.token), ['Gamma']);
    assert.deepEqual(await names(top, 'owned=true', alice.token), []);
    await t.ok('POST', `/projects/${projects.Alpha.id}/archive`, ROOT_TOKEN, undefined, 201);
    assert.deepEqual(await names(top, 'archived=true', alice.token), ['Alpha']);
    assert.deepEqual(await names(top, 'archived=false', alice.token), newestFirst('Beta', 'Gamma'));
  });

  it('answers each project as GET /projects does, in pages with their headers', async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v4/groups/${top.id}/projects?per_page=1&page=2`,
      token: alice.token,
    });
    assert.equal(res.headers['x-total'], '3');
    assert.equal(res.headers['x-next-page'], '3');
    const [listed] = res.json;
    const all = await t.request({
      method: 'GET',
      url: `/api/v4/projects?per_page=100&order_by=id`,
      token: alice.token,
    });
    assert.deepEqual(
      listed,
      all.json.find((p: { id: number }) => p.id === listed.id),
    );
  });

  it('is 404 Group Not Found for a group the caller cannot see, and 400 for values GitLab does not take', async () => {
    for (const id of [String(hidden.id), 'hidden', '999999']) {
      const res = await t.request({ method: 'GET', url: `/api/v4/groups/${id}/projects`, token: alice.token });
      assert.equal(res.statusCode, 404, id);
      assert.deepEqual(res.json, { message: '404 Group Not Found' });
    }
    assert.deepEqual(await names(hidden, '', ROOT_TOKEN), ['Epsilon']);
    const res = await t.request({
      method: 'GET',
      url: `/api/v4/groups/${top.id}/projects?order_by=stars`,
      token: alice.token,
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json, { error: 'order_by does not have a valid value' });
  });
});

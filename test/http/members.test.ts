// Project and group members (docs/gitlab-compatibility.md#members): add, change, remove, direct vs inherited lists,
// who manages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helper.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const FORBIDDEN = { message: '403 Forbidden' };
const MEMBER_NOT_FOUND = { message: '404 Member Not Found' };

describe('members API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let owner: U, reporter: U, gmaint: U, pdev: U, pmaint: U, target: U, outsider: U, admin: U;
  let team: any, sub: any, app: any;

  const levels = (list: any[]) =>
    list.map((m) => [m.username, m.access_level]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

  before(async () => {
    t = await createTestApp();
    [owner, reporter, gmaint, pdev, pmaint, target, outsider, admin] = await Promise.all(
      ['owner', 'reporter', 'gmaint', 'pdev', 'pmaint', 'target', 'outsider']
        .map((u) => t.user(u))
        .concat(t.user('admin1', { admin: true })),
    );
    team = await t.ok('POST', '/groups', owner.token, { name: 'Team', path: 'team' }, 201);
    sub = await t.ok('POST', '/groups', owner.token, { name: 'Sub', path: 'sub', parent_id: team.id }, 201);
    app = await t.ok('POST', '/projects', owner.token, { path: 'app', namespace_id: sub.id }, 201);
    await t.ok('POST', `/groups/${team.id}/members`, owner.token, { user_id: reporter.id, access_level: 20 }, 201);
    await t.ok('POST', `/groups/${team.id}/members`, owner.token, { user_id: gmaint.id, access_level: 40 }, 201);
    await t.ok('POST', `/projects/${app.id}/members`, owner.token, { user_id: pdev.id, access_level: 30 }, 201);
    await t.ok('POST', `/projects/${app.id}/members`, owner.token, { user_id: pmaint.id, access_level: 40 }, 201);
  });
  after(() => t.close());

  for (const kind of ['projects', 'groups'] as const) {
    describe(`${kind}/:id/members lifecycle`, () => {
      const base = () => `/${kind}/${kind === 'projects' ? app.id : sub.id}/members`;

      it('POST adds a member: 201 with the user and the level', async () => {
        const res = await t.api('POST', base(), owner.token, { user_id: target.id, access_level: 20 });
        assert.equal(res.statusCode, 201, res.body);
        const { id, username, name, state, access_level, created_at } = res.json;
        assert.deepEqual(
          { id, username, name, state, access_level },
          { id: target.id, username: 'target', name: 'TARGET', state: 'active', access_level: 20 },
        );
        assert.match(created_at, ISO);
        const got = await t.ok('GET', `${base()}/${target.id}`, owner.token, undefined, 200);
        assert.deepEqual([got.id, got.access_level], [target.id, 20]);
      });

      it('POST twice is 409 Member already exists', async () => {
        const res = await t.api('POST', base(), owner.token, { user_id: target.id, access_level: 30 });
        assert.equal(res.statusCode, 409);
        assert.deepEqual(res.json, { message: 'Member already exists' });
      });

      it('POST with an unknown user is 404 User Not Found', async () => {
        const res = await t.api('POST', base(), owner.token, { user_id: 999999, access_level: 30 });
        assert.equal(res.statusCode, 404);
        assert.deepEqual(res.json, { message: '404 User Not Found' });
      });

      it('POST or PUT with an invalid access_level is 400', async () => {
        for (const access_level of [0, 5, 35, 60]) {
          const add = await t.api('POST', base(), owner.token, { user_id: outsider.id, access_level });
          assert.equal(add.statusCode, 400, String(access_level));
          assert.deepEqual(add.json, { error: 'access_level does not have a valid value' });
          const put = await t.api('PUT', `${base()}/${target.id}`, owner.token, { access_level });
          assert.equal(put.statusCode, 400);
          assert.deepEqual(put.json, { error: 'access_level does not have a valid value' });
        }
      });

      it('PUT changes the level', async () => {
        const res = await t.ok('PUT', `${base()}/${target.id}`, owner.token, { access_level: 30 }, 200);
        assert.deepEqual([res.id, res.username, res.access_level], [target.id, 'target', 30]);
        assert.equal((await t.ok('GET', `${base()}/${target.id}`, owner.token, undefined, 200)).access_level, 30);
      });

      it('DELETE is 204, then the member is 404 Member Not Found', async () => {
        const res = await t.api('DELETE', `${base()}/${target.id}`, owner.token);
        assert.equal(res.statusCode, 204);
        assert.equal(res.body, '');
        for (const [method, payload] of [['GET'], ['PUT', { access_level: 30 }], ['DELETE']] as const) {
          const again = await t.api(method, `${base()}/${target.id}`, owner.token, payload);
          assert.equal(again.statusCode, 404, method);
          assert.deepEqual(again.json, MEMBER_NOT_FOUND);
        }
      });

      it('anonymous changes are 401', async () => {
        const res = await t.api('POST', base(), null, { user_id: target.id, access_level: 30 });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(res.json, { message: '401 Unauthorized' });
      });
    });
  }

  describe('direct and inherited lists', () => {
    it('GET members lists only direct members', async () => {
      const list = await t.ok('GET', `/projects/${app.id}/members`, owner.token, undefined, 200);
      assert.deepEqual(levels(list), [
        ['owner', 40],
        ['pdev', 30],
        ['pmaint', 40],
      ]);
      assert.deepEqual(levels(await t.ok('GET', `/groups/${sub.id}/members`, owner.token, undefined, 200)), [
        ['owner', 50],
      ]);
    });

    it('GET members and members/all filter by query (name or username) and user_ids, as GitLab', async () => {
      const direct = (query: string) =>
        t.ok('GET', `/projects/${app.id}/members?${query}`, owner.token, undefined, 200);
      const all = (query: string) =>
        t.ok('GET', `/projects/${app.id}/members/all?${query}`, owner.token, undefined, 200);
      assert.deepEqual(levels(await direct('query=PMAI')), [['pmaint', 40]]);
      assert.deepEqual(levels(await direct(`user_ids=${pdev.id},${pmaint.id}`)), [
        ['pdev', 30],
        ['pmaint', 40],
      ]);
      assert.deepEqual(levels(await direct(`user_ids[]=${pdev.id}`)), [['pdev', 30]]);
      assert.deepEqual(levels(await all('query=gmai')), [['gmaint', 40]]);
      assert.deepEqual(levels(await all(`query=p&user_ids=${pmaint.id}`)), [['pmaint', 40]]);
      // An id past the columns' range names no one (PostgreSQL refused the comparison: a 500); none given, all.
      assert.deepEqual(levels(await direct('user_ids=3000000000')), []);
      assert.deepEqual(levels(await all('user_ids=99999999999999999999999')), []);
      assert.equal(levels(await direct('user_ids=')).length, 3);
      await t.fails('GET', `/projects/${app.id}/members?user_ids=x`, owner.token, undefined, 400, {
        error: 'user_ids is invalid',
      });
    });

    it("GET members/all adds ancestor groups' members, the highest level winning", async () => {
      await t.ok('POST', `/projects/${app.id}/members`, owner.token, { user_id: reporter.id, access_level: 30 }, 201);
      await t.ok('POST', `/projects/${app.id}/members`, owner.token, { user_id: gmaint.id, access_level: 10 }, 201);
      const all = await t.ok('GET', `/projects/${app.id}/members/all`, pdev.token, undefined, 200);
      assert.deepEqual(levels(all), [
        ['gmaint', 40],
        ['owner', 50],
        ['pdev', 30],
        ['pmaint', 40],
        ['reporter', 30],
      ]);
      const direct = await t.ok('GET', `/projects/${app.id}/members`, pdev.token, undefined, 200);
      assert.deepEqual(levels(direct), [
        ['gmaint', 10],
        ['owner', 40],
        ['pdev', 30],
        ['pmaint', 40],
        ['reporter', 30],
      ]);
      const groupAll = await t.ok('GET', `/groups/${sub.id}/members/all`, reporter.token, undefined, 200);
      assert.deepEqual(levels(groupAll), [
        ['gmaint', 40],
        ['owner', 50],
        ['reporter', 20],
      ]);
      await t.ok('DELETE', `/projects/${app.id}/members/${reporter.id}`, owner.token, undefined, 204);
      await t.ok('DELETE', `/projects/${app.id}/members/${gmaint.id}`, owner.token, undefined, 204);
    });
  });

  describe('who may manage members', () => {
    it('projects: maintainers (direct or inherited) and admins; developers get 403', async () => {
      for (const who of [pdev, reporter]) {
        const res = await t.api('POST', `/projects/${app.id}/members`, who.token, {
          user_id: outsider.id,
          access_level: 10,
        });
        assert.equal(res.statusCode, 403, who.username);
        assert.deepEqual(res.json, FORBIDDEN);
        const del = await t.api('DELETE', `/projects/${app.id}/members/${pmaint.id}`, who.token);
        assert.equal(del.statusCode, 403);
        assert.deepEqual(del.json, FORBIDDEN);
        const put = await t.api('PUT', `/projects/${app.id}/members/${pmaint.id}`, who.token, { access_level: 10 });
        assert.equal(put.statusCode, 403);
        assert.deepEqual(put.json, FORBIDDEN);
      }
      for (const who of [pmaint, gmaint, admin]) {
        await t.ok('POST', `/projects/${app.id}/members`, who.token, { user_id: outsider.id, access_level: 10 }, 201);
        await t.ok('PUT', `/projects/${app.id}/members/${outsider.id}`, who.token, { access_level: 20 }, 200);
        await t.ok('DELETE', `/projects/${app.id}/members/${outsider.id}`, who.token, undefined, 204);
      }
    });

    it("the Owner level is the owners' own: a project maintainer may neither grant it nor change or remove an owner (403)", async () => {
      const members = `/projects/${app.id}/members`;
      // An owner (inherited from the group) makes `target` a direct owner of the project.
      await t.ok('POST', members, owner.token, { user_id: target.id, access_level: 50 }, 201);
      for (const who of [pmaint, gmaint]) {
        const grant = await t.api('POST', members, who.token, { user_id: outsider.id, access_level: 50 });
        assert.equal(grant.statusCode, 403, who.username);
        assert.deepEqual(grant.json, FORBIDDEN);
        assert.deepEqual((await t.api('GET', `${members}/${outsider.id}`, who.token)).json, MEMBER_NOT_FOUND);
        // Not found comes first, as in GitLab: an unknown user, a user who is not a member.
        assert.equal((await t.api('POST', members, who.token, { user_id: 999999, access_level: 50 })).statusCode, 404);
        assert.equal(
          (await t.api('PUT', `${members}/${outsider.id}`, who.token, { access_level: 50 })).statusCode,
          404,
        );
        // Any lower level is theirs to give, but not to raise to Owner, themselves included.
        await t.ok('POST', members, who.token, { user_id: outsider.id, access_level: 40 }, 201);
        for (const id of [outsider.id, pmaint.id]) {
          const raise = await t.api('PUT', `${members}/${id}`, who.token, { access_level: 50 });
          assert.equal(raise.statusCode, 403);
          assert.deepEqual(raise.json, FORBIDDEN);
        }
        for (const [method, body] of [
          ['PUT', { access_level: 30 }],
          ['DELETE', undefined],
        ] as const) {
          const res = await t.api(method, `${members}/${target.id}`, who.token, body);
          assert.equal(res.statusCode, 403, `${who.username} ${method}`);
          assert.deepEqual(res.json, FORBIDDEN);
        }
        await t.ok('DELETE', `${members}/${outsider.id}`, who.token, undefined, 204);
      }
      assert.equal((await t.ok('GET', `${members}/${target.id}`, owner.token, undefined, 200)).access_level, 50);
      assert.equal((await t.ok('GET', `${members}/${pmaint.id}`, owner.token, undefined, 200)).access_level, 40);
      // Owners and admins may.
      await t.ok('PUT', `${members}/${target.id}`, admin.token, { access_level: 40 }, 200);
      await t.ok('PUT', `${members}/${target.id}`, owner.token, { access_level: 50 }, 200);
      await t.ok('DELETE', `${members}/${target.id}`, owner.token, undefined, 204);
    });

    it('groups: owners (direct or inherited) and admins; maintainers get 403', async () => {
      for (const who of [gmaint, reporter]) {
        const res = await t.api('POST', `/groups/${sub.id}/members`, who.token, {
          user_id: outsider.id,
          access_level: 10,
        });
        assert.equal(res.statusCode, 403, who.username);
        assert.deepEqual(res.json, FORBIDDEN);
        const del = await t.api('DELETE', `/groups/${team.id}/members/${reporter.id}`, who.token);
        assert.equal(del.statusCode, 403);
        assert.deepEqual(del.json, FORBIDDEN);
      }
      const subOwner = await t.user('subowner');
      await t.ok('POST', `/groups/${team.id}/members`, owner.token, { user_id: subOwner.id, access_level: 50 }, 201);
      for (const who of [subOwner, admin]) {
        await t.ok('POST', `/groups/${sub.id}/members`, who.token, { user_id: outsider.id, access_level: 10 }, 201);
        await t.ok('PUT', `/groups/${sub.id}/members/${outsider.id}`, who.token, { access_level: 30 }, 200);
        await t.ok('DELETE', `/groups/${sub.id}/members/${outsider.id}`, who.token, undefined, 204);
      }
    });

    it('a private project or group the caller cannot see is 404, not 403', async () => {
      const p = await t.api('POST', `/projects/${app.id}/members`, outsider.token, {
        user_id: outsider.id,
        access_level: 50,
      });
      assert.equal(p.statusCode, 404);
      assert.deepEqual(p.json, { message: '404 Project Not Found' });
      const g = await t.api('POST', `/groups/${team.id}/members`, outsider.token, {
        user_id: outsider.id,
        access_level: 50,
      });
      assert.equal(g.statusCode, 404);
      assert.deepEqual(g.json, { message: '404 Group Not Found' });
    });
  });

  describe('inherited access', () => {
    it('membership of an ancestor group grants access to projects in subgroups, until removed', async () => {
      const heir = await t.user('heir');
      assert.equal((await t.api('GET', '/projects/team%2Fsub%2Fapp', heir.token)).statusCode, 404);
      await t.ok('POST', `/groups/${team.id}/members`, owner.token, { user_id: heir.id, access_level: 20 }, 201);
      const seen = await t.ok('GET', '/projects/team%2Fsub%2Fapp', heir.token, undefined, 200);
      assert.deepEqual(seen.permissions, {
        project_access: null,
        group_access: { access_level: 20, notification_level: 3 },
      });
      assert.equal((await t.ok('GET', `/groups/${sub.id}`, heir.token, undefined, 200)).id, sub.id);
      await t.ok('DELETE', `/groups/${team.id}/members/${heir.id}`, owner.token, undefined, 204);
      const gone = await t.api('GET', `/projects/${app.id}`, heir.token);
      assert.equal(gone.statusCode, 404);
      assert.deepEqual(gone.json, { message: '404 Project Not Found' });
    });
  });
});

describe("a private group's members", () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let owner: U, member: U, projectGuest: U, subgroupGuest: U, admin: U;
  let secret: any, inner: any;

  before(async () => {
    t = await createTestApp();
    [owner, member, projectGuest, subgroupGuest, admin] = await Promise.all(
      ['owner', 'member', 'pguest', 'sguest'].map((u) => t.user(u)).concat(t.user('admin1', { admin: true })),
    );
    secret = await t.ok('POST', '/groups', owner.token, { name: 'Secret', path: 'secret', visibility: 'private' }, 201);
    inner = await t.ok('POST', '/groups', owner.token, { name: 'Inner', path: 'inner', parent_id: secret.id }, 201);
    const project = await t.ok('POST', '/projects', owner.token, { path: 'p', namespace_id: secret.id }, 201);
    await t.ok('POST', `/groups/${secret.id}/members`, owner.token, { user_id: member.id, access_level: 30 }, 201);
    await t.ok(
      'POST',
      `/projects/${project.id}/members`,
      owner.token,
      { user_id: projectGuest.id, access_level: 10 },
      201,
    );
    await t.ok(
      'POST',
      `/groups/${inner.id}/members`,
      owner.token,
      { user_id: subgroupGuest.id, access_level: 10 },
      201,
    );
  });
  after(() => t.close());

  const paths = () => [
    `/groups/${secret.id}/members`,
    `/groups/${secret.id}/members/all`,
    `/groups/${secret.id}/members/${member.id}`,
  ];

  it('are listed to its members (inherited too) and admins', async () => {
    for (const user of [owner, member, admin]) {
      const list = await t.ok('GET', paths()[0], user.token, undefined, 200);
      assert.deepEqual(list.map((m: any) => m.username).sort(), ['member', 'owner']);
      assert.equal((await t.ok('GET', paths()[2], user.token, undefined, 200)).username, 'member');
    }
    // A member of the private group reads the members of a group inside it.
    const innerAll = await t.ok('GET', `/groups/${inner.id}/members/all`, member.token, undefined, 200);
    assert.deepEqual(innerAll.map((m: any) => m.username).sort(), ['member', 'owner', 'sguest']);
  });

  it('are not listed to members of something inside it, who may see the group itself (GitLab: read_group_member)', async () => {
    for (const user of [projectGuest, subgroupGuest]) {
      assert.equal((await t.ok('GET', `/groups/${secret.id}`, user.token, undefined, 200)).id, secret.id);
      for (const path of paths()) await t.fails('GET', path, user.token, undefined, 403, FORBIDDEN);
    }
  });

  it('an internal group lists its members to an external member of a project inside it (who may read the group)', async () => {
    const ext = await t.user('ext', { external: true });
    const open = await t.ok(
      'POST',
      '/groups',
      owner.token,
      { name: 'Open', path: 'open', visibility: 'internal' },
      201,
    );
    const inside = await t.ok('POST', '/projects', owner.token, { path: 'in', namespace_id: open.id }, 201);
    await t.ok('POST', `/projects/${inside.id}/members`, owner.token, { user_id: ext.id, access_level: 30 }, 201);
    assert.equal((await t.ok('GET', `/groups/${open.id}`, ext.token, undefined, 200)).id, open.id);
    const list = await t.ok('GET', `/groups/${open.id}/members`, ext.token, undefined, 200);
    assert.deepEqual(
      list.map((m: any) => m.username),
      ['owner'],
    );
  });

  it('a membership with an end is refused, not made permanent (memberships here do not expire)', async () => {
    const body = { message: { expires_at: ['is not supported: memberships here do not expire'] } };
    await t.fails(
      'POST',
      `/groups/${secret.id}/members`,
      owner.token,
      { user_id: admin.id, access_level: 30, expires_at: '2999-01-01' },
      400,
      body,
    );
    await t.fails(
      'PUT',
      `/groups/${secret.id}/members/${member.id}`,
      owner.token,
      { access_level: 20, expires_at: '2999-01-01' },
      400,
      body,
    );
    await t.fails('GET', `/groups/${secret.id}/members/${admin.id}`, owner.token, undefined, 404, {
      message: '404 Member Not Found',
    });
    assert.equal(
      (await t.ok('GET', `/groups/${secret.id}/members/${member.id}`, owner.token, undefined, 200)).access_level,
      30,
    );
    // Without one, or a blank one, as GitLab takes it.
    await t.ok(
      'PUT',
      `/groups/${secret.id}/members/${member.id}`,
      owner.token,
      { access_level: 30, expires_at: '' },
      200,
    );
  });

  it('its last owner can be neither lowered nor removed, even by an admin (GitLab: last_owner); with another owner they can', async () => {
    const url = `/groups/${secret.id}/members/${owner.id}`;
    for (const user of [owner, admin]) {
      await t.fails('PUT', url, user.token, { access_level: 40 }, 403, FORBIDDEN);
      await t.fails('DELETE', url, user.token, undefined, 403, FORBIDDEN);
    }
    assert.equal((await t.ok('GET', url, owner.token, undefined, 200)).access_level, 50);
    // A blocked owner does not count.
    const co = await t.user('co-owner');
    await t.ok('POST', `/groups/${secret.id}/members`, owner.token, { user_id: co.id, access_level: 50 }, 201);
    await t.ok('POST', `/users/${co.id}/block`, admin.token, undefined, 201);
    await t.fails('PUT', url, owner.token, { access_level: 40 }, 403, FORBIDDEN);
    // In a group inside it, memberships above count too (GitLab counts memberships): the owner's own in the
    // group above still stands when the one inside is lowered.
    const lowered = await t.ok(
      'PUT',
      `/groups/${inner.id}/members/${owner.id}`,
      owner.token,
      { access_level: 40 },
      200,
    );
    assert.equal(lowered.access_level, 40);
    await t.ok('PUT', `/groups/${secret.id}/members/${member.id}`, owner.token, { access_level: 50 }, 200);
    assert.equal((await t.ok('PUT', url, owner.token, { access_level: 40 }, 200)).access_level, 40);
    await t.fails('DELETE', `/groups/${secret.id}/members/${member.id}`, member.token, undefined, 403, FORBIDDEN);
  });
});

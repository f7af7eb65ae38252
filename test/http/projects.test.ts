// Projects API (docs/gitlab-compatibility.md#projects; lookup rules #project-lookup).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, TEST_DB, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const NOT_FOUND = { message: '404 Project Not Found' };
const FORBIDDEN = { message: '403 Forbidden' };
const TAKEN = ['has already been taken'];
const lvl = (access_level: number) => ({ access_level, notification_level: 3 });

describe('projects API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, bob: U, dev: U, reporter: U, boss: U;
  let grp: any, sub: any, dotted: any;

  const addGroupMember = (g: number, user: U, level: number) =>
    t.ok('POST', `/groups/${g}/members`, alice.token, { user_id: user.id, access_level: level }, 201);

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    [alice, bob, dev, reporter, boss] = [
      await t.user('alice'),
      await t.user('bob'),
      await t.user('dev'),
      await t.user('reporter'),
      await t.user('boss', { admin: true }),
    ];
    grp = await t.ok('POST', '/groups', alice.token, { name: 'Grp', path: 'grp', visibility: 'public' }, 201);
    sub = await t.ok(
      'POST',
      '/groups',
      alice.token,
      { name: 'Sub X', path: 'sub.x', parent_id: grp.id, visibility: 'public' },
      201,
    );
    await addGroupMember(grp.id, dev, 30);
    await addGroupMember(grp.id, reporter, 20);
    dotted = await t.ok(
      'POST',
      '/projects',
      dev.token,
      { name: 'Proj With Dots', path: 'proj.with.dots', namespace_id: sub.id, visibility: 'public' },
      201,
    );
  });
  after(() => t.close());

  describe('POST /projects', () => {
    it('requires name or path', async () => {
      const res = await t.api('POST', '/projects', alice.token, { description: 'x' });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json, { error: 'name, path are missing, at least one parameter must be provided' });
    });

    it('counts a null name or path as not given, as every optional parameter (the fuzzer found a 500)', async () => {
      const missing = { error: 'name, path are missing, at least one parameter must be provided' };
      for (const body of [{ path: null }, { name: null }, { name: null, path: null }]) {
        await t.fails('POST', '/projects', alice.token, body, 400, missing);
        await t.fails('POST', `/projects/user/${alice.id}`, ROOT_TOKEN, body, 400, missing);
      }
      const p = await t.ok('POST', '/projects', alice.token, { name: 'Named', path: null }, 201);
      assert.deepEqual([p.name, p.path], ['Named', 'named']);
    });

    it('requires authentication', async () => {
      const res = await t.api('POST', '/projects', null, { name: 'anon' });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json, { message: '401 Unauthorized' });
    });

    it('creates in the personal namespace with every documented field; the creator owns it', async () => {
      const p = await t.ok('POST', '/projects', alice.token, { path: 'mine' }, 201);
      const got = await t.ok('GET', `/projects/${p.id}`, alice.token, undefined, 200);
      const expected: Record<string, unknown> = {
        id: p.id,
        name: 'mine',
        path: 'mine',
        path_with_namespace: 'alice/mine',
        name_with_namespace: 'ALICE / mine',
        description: null,
        visibility: 'private',
        default_branch: 'main',
        web_url: `${BASE}/alice/mine`,
        http_url_to_repo: `${BASE}/alice/mine.git`,
        ssh_url_to_repo: 'git@gitlab.example.com:alice/mine.git',
        archived: false,
        snippets_access_level: 'enabled',
        snippets_enabled: true,
        creator_id: alice.id,
        permissions: { project_access: lvl(50), group_access: null },
      };
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(got[key], value, key);
      const { id, name, path, kind, full_path } = got.namespace;
      assert.deepEqual(
        { name, path, kind, full_path },
        { name: 'ALICE', path: 'alice', kind: 'user', full_path: 'alice' },
      );
      assert.equal(typeof id, 'number');
      assert.match(got.created_at, ISO);
      assert.match(got.last_activity_at, ISO);
    });

    it('derives the path from the name and honours the optional attributes', async () => {
      const p = await t.ok(
        'POST',
        '/projects',
        alice.token,
        {
          name: 'Hello',
          visibility: 'internal',
          snippets_access_level: 'private',
          default_branch: 'trunk',
          description: 'hi',
        },
        201,
      );
      assert.deepEqual(
        [p.name, p.path, p.visibility, p.snippets_access_level, p.default_branch, p.description],
        ['Hello', 'hello', 'internal', 'private', 'trunk', 'hi'],
      );
    });

    it("refuses a description over GitLab's 2,000 characters on create and update, with the model's message", async () => {
      const refused = { message: { description: ['is too long (maximum is 2000 characters)'] } };
      const over = `${'😀'.repeat(2000)}x`;
      await t.fails('POST', '/projects', alice.token, { name: 'Described', description: over }, 400, refused);
      const p = await t.ok(
        'POST',
        '/projects',
        alice.token,
        { name: 'Described', description: '😀'.repeat(2000) },
        201,
      );
      assert.equal(p.description, '😀'.repeat(2000));
      await t.fails('PUT', `/projects/${p.id}`, alice.token, { description: over }, 400, refused);
      // A name over 255 characters is refused on update as on create (unbounded, one was 16 MB in every list).
      await t.fails('PUT', `/projects/${p.id}`, alice.token, { name: 'n'.repeat(256) }, 400, {
        message: { name: ['is too long (maximum is 255 characters)'] },
      });
      assert.equal(
        (await t.ok('GET', `/projects/${p.id}`, alice.token, undefined, 200)).description,
        '😀'.repeat(2000),
      );
    });

    it('creates in a group where the caller is developer, as maintainer', async () => {
      const got = await t.ok('GET', `/projects/${dotted.id}`, dev.token, undefined, 200);
      assert.equal(got.path_with_namespace, 'grp/sub.x/proj.with.dots');
      assert.equal(got.name_with_namespace, 'Grp / Sub X / Proj With Dots');
      assert.deepEqual(got.namespace, {
        ...got.namespace,
        id: sub.id,
        name: 'Sub X',
        path: 'sub.x',
        kind: 'group',
        full_path: 'grp/sub.x',
      });
      assert.equal(got.web_url, `${BASE}/grp/sub.x/proj.with.dots`);
      assert.equal(got.creator_id, dev.id);
      assert.deepEqual(got.permissions, { project_access: lvl(40), group_access: lvl(30) });
    });

    it('refuses a group where the caller is only reporter', async () => {
      const res = await t.api('POST', '/projects', reporter.token, { path: 'nope', namespace_id: grp.id });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json, { message: { namespace: ['is not valid'] } });
    });

    it('refuses a duplicate path (any case) and a duplicate name in the namespace', async () => {
      await t.ok('POST', '/projects', bob.token, { name: 'Dup', path: 'dup' }, 201);
      const samePath = await t.api('POST', '/projects', bob.token, { name: 'Other', path: 'DUP' });
      assert.equal(samePath.statusCode, 400);
      assert.deepEqual(samePath.json.message.path, TAKEN);
      const sameName = await t.api('POST', '/projects', bob.token, { name: 'dup', path: 'dup2' });
      assert.equal(sameName.statusCode, 400);
      assert.deepEqual(sameName.json.message.name, TAKEN);
      await t.ok('POST', '/projects', alice.token, { name: 'Dup', path: 'dup' }, 201);
    });
  });

  describe('GET /projects/:id', () => {
    it('finds by number, URL-encoded full path with nested groups and dots, case-insensitively', async () => {
      for (const id of [String(dotted.id), 'grp%2Fsub.x%2Fproj.with.dots', 'GRP%2FSub.X%2FProj.With.Dots']) {
        const got = await t.ok('GET', `/projects/${id}`, bob.token, undefined, 200);
        assert.equal(got.id, dotted.id, id);
      }
    });

    it("snippets_enabled is whether the caller may use the snippets feature (GitLab's feature_available?), in lists too", async () => {
      const p = await t.ok(
        'POST',
        '/projects',
        alice.token,
        { path: 'snippets-feature', visibility: 'public', snippets_access_level: 'private' },
        201,
      );
      // dev is a guest here; reporter a developer of the group the project is not in: no membership of it.
      await t.ok('POST', `/projects/${p.id}/members`, alice.token, { user_id: dev.id, access_level: 10 }, 201);
      const callers = [
        ['anonymous', null, { private: false }],
        ['non-member', reporter.token, { private: false }],
        ['guest', dev.token, { private: true }],
        ['owner', alice.token, { private: true }],
        ['administrator', boss.token, { private: true }],
      ] as const;
      for (const level of ['private', 'enabled', 'disabled'] as const) {
        await t.ok('PUT', `/projects/${p.id}`, alice.token, { snippets_access_level: level }, 200);
        for (const [who, token, open] of callers) {
          const want = level === 'enabled' || (level === 'private' && open.private);
          const one = await t.ok('GET', `/projects/${p.id}`, token, undefined, 200);
          assert.deepEqual([one.snippets_access_level, one.snippets_enabled], [level, want], `${level} ${who}`);
          const listed = (await t.ok('GET', '/projects?search=snippets-feature', token, undefined, 200)) as any[];
          assert.deepEqual(
            listed.map((r) => [r.id, r.snippets_enabled]),
            [[p.id, want]],
            `${level} ${who} GET /projects`,
          );
        }
      }
    });

    it('does not find a bare word or an unknown id', async () => {
      for (const id of ['proj.with.dots', 'mine', '999999', 'grp%2Fnope']) {
        const res = await t.api('GET', `/projects/${id}`, boss.token);
        assert.equal(res.statusCode, 404, id);
        assert.deepEqual(res.json, NOT_FOUND);
      }
    });
  });

  describe('PUT /projects/:id', () => {
    it('lets a maintainer and an admin change it, an owner its visibility too; a developer gets 403', async () => {
      const p = await t.ok('POST', '/projects', reporter.token, { path: 'editable' }, 201);
      await t.ok('POST', `/projects/${p.id}/members`, reporter.token, { user_id: dev.id, access_level: 30 }, 201);
      await t.ok('POST', `/projects/${p.id}/members`, reporter.token, { user_id: bob.id, access_level: 40 }, 201);
      const denied = await t.api('PUT', `/projects/${p.id}`, dev.token, { description: 'no' });
      assert.equal(denied.statusCode, 403);
      assert.deepEqual(denied.json, FORBIDDEN);
      // Visibility is the owners' (GitLab's change_visibility_level): a maintainer naming it at all gets 403,
      // and nothing of the request is applied.
      for (const visibility of ['public', 'private']) {
        const res = await t.api('PUT', `/projects/${p.id}`, bob.token, { description: 'no', visibility });
        assert.equal(res.statusCode, 403, visibility);
        assert.deepEqual(res.json, FORBIDDEN);
      }
      assert.equal(
        (await t.ok('PUT', `/projects/${p.id}`, reporter.token, { visibility: 'public' }, 200)).visibility,
        'public',
      );
      const changed = await t.ok(
        'PUT',
        `/projects/${p.id}`,
        bob.token,
        {
          name: 'Edited',
          description: 'new',
          snippets_access_level: 'disabled',
          default_branch: 'dev',
        },
        200,
      );
      assert.deepEqual(
        [
          changed.name,
          changed.path,
          changed.description,
          changed.visibility,
          changed.snippets_access_level,
          changed.snippets_enabled,
          changed.default_branch,
        ],
        ['Edited', 'editable', 'new', 'public', 'disabled', false, 'dev'],
      );
      // A name no branch can have is GitLab's change_head failing; the project stays as it was.
      for (const default_branch of ['a..b', '-x', 'd'.repeat(256)])
        await t.fails('PUT', `/projects/${p.id}`, bob.token, { default_branch }, 400, {
          message: 'Could not set the default branch',
        });
      for (const default_branch of ['a..b', 'd'.repeat(256)])
        await t.fails('POST', '/projects', bob.token, { path: 'odd-branch', default_branch }, 400, {
          message: '400 Bad request - Invalid branch name',
        });
      assert.equal((await t.ok('GET', `/projects/${p.id}`, bob.token, undefined, 200)).default_branch, 'dev');
      const byAdmin = await t.ok('PUT', `/projects/reporter%2Feditable`, boss.token, { description: 'admin' }, 200);
      assert.equal(byAdmin.description, 'admin');
      assert.equal((await t.ok('GET', `/projects/${p.id}`, dev.token, undefined, 200)).description, 'admin');
    });
  });

  describe('external users', () => {
    it('create neither personal projects nor groups (403), but projects in a group that lets them', async () => {
      const ext = await t.user('contractor', { external: true });
      const personal = await t.api('POST', '/projects', ext.token, { path: 'own' });
      assert.equal(personal.statusCode, 403);
      assert.deepEqual(personal.json, {
        error: ['You cannot create projects in your personal namespace. Contact your GitLab administrator.'],
      });
      const group = await t.api('POST', '/groups', ext.token, { name: 'Ext', path: 'ext-group' });
      assert.equal(group.statusCode, 403);
      assert.deepEqual(group.json, FORBIDDEN);
      const team = await t.ok('POST', '/groups', alice.token, { name: 'Ext team', path: 'ext-team' }, 201);
      await t.ok('POST', `/groups/${team.id}/members`, alice.token, { user_id: ext.id, access_level: 40 }, 201);
      await t.ok('POST', '/projects', ext.token, { path: 'allowed', namespace_id: team.id }, 201);
    });
  });

  describe('restricted visibility levels', () => {
    it("bind projects and groups as they bind snippets: 400 with GitLab's bodies for all but admins", async () => {
      await t.ok('PUT', '/application/settings', boss.token, { restricted_visibility_levels: ['public'] }, 200);
      try {
        const restricted = {
          message: { visibility_level: ['public has been restricted by your GitLab administrator'] },
        };
        const created = await t.api('POST', '/projects', bob.token, { path: 'shown', visibility: 'public' });
        assert.equal(created.statusCode, 400);
        assert.deepEqual(created.json, restricted);
        const own = await t.ok('POST', '/projects', bob.token, { path: 'kept-in', visibility: 'private' }, 201);
        const raised = await t.api('PUT', `/projects/${own.id}`, bob.token, { visibility: 'public' });
        assert.equal(raised.statusCode, 400);
        assert.deepEqual(raised.json, restricted);
        const group = await t.api('POST', '/groups', bob.token, {
          name: 'Shown',
          path: 'shown-group',
          visibility: 'public',
        });
        assert.equal(group.statusCode, 400);
        assert.deepEqual(group.json, {
          message:
            'Failed to save group {:visibility_level=>["public has been restricted by your GitLab administrator"]}',
        });
        const mine = await t.ok(
          'POST',
          '/groups',
          bob.token,
          { name: 'Mine', path: 'bobs-group', visibility: 'private' },
          201,
        );
        const groupRaised = await t.api('PUT', `/groups/${mine.id}`, bob.token, { visibility: 'public' });
        assert.equal(groupRaised.statusCode, 400);
        assert.deepEqual(groupRaised.json, restricted);
        assert.equal((await t.ok('GET', `/projects/${own.id}`, bob.token, undefined, 200)).visibility, 'private');
        // Administrators are not bound.
        assert.equal(
          (await t.ok('PUT', `/projects/${own.id}`, boss.token, { visibility: 'public' }, 200)).visibility,
          'public',
        );
        await t.ok('PUT', `/groups/${mine.id}`, boss.token, { visibility: 'public' }, 200);
      } finally {
        await t.ok('PUT', '/application/settings', boss.token, { restricted_visibility_levels: [] }, 200);
      }
    });
  });

  describe('archive and unarchive', () => {
    it('sets archived (201) for owners and admins; a maintainer or developer gets 403', async () => {
      // dev created the project in alice's group: its maintainer; alice owns the group.
      for (const who of [reporter, dev]) {
        const denied = await t.api('POST', `/projects/${dotted.id}/archive`, who.token);
        assert.equal(denied.statusCode, 403, who.username);
        assert.deepEqual(denied.json, FORBIDDEN);
      }
      assert.equal((await t.ok('POST', `/projects/${dotted.id}/archive`, alice.token, undefined, 201)).archived, true);
      assert.equal((await t.ok('GET', `/projects/${dotted.id}`, bob.token, undefined, 200)).archived, true);
      assert.equal(
        (await t.ok('POST', `/projects/${dotted.id}/unarchive`, boss.token, undefined, 201)).archived,
        false,
      );
      assert.equal((await t.ok('GET', `/projects/${dotted.id}`, bob.token, undefined, 200)).archived, false);
    });
  });

  describe('DELETE /projects/:id', () => {
    it('is refused to a maintainer (403) and accepted from the owner (202), then 404', async () => {
      const p = await t.ok('POST', '/projects', bob.token, { path: 'doomed', visibility: 'public' }, 201);
      await t.ok('POST', `/projects/${p.id}/members`, bob.token, { user_id: dev.id, access_level: 40 }, 201);
      const denied = await t.api('DELETE', `/projects/${p.id}`, dev.token);
      assert.equal(denied.statusCode, 403);
      assert.deepEqual(denied.json, FORBIDDEN);
      const res = await t.api('DELETE', `/projects/${p.id}`, bob.token);
      assert.equal(res.statusCode, 202);
      assert.deepEqual(res.json, { message: '202 Accepted' });
      for (const id of [String(p.id), 'bob%2Fdoomed']) {
        const gone = await t.api('GET', `/projects/${id}`, bob.token);
        assert.equal(gone.statusCode, 404);
        assert.deepEqual(gone.json, NOT_FOUND);
      }
    });

    it('is accepted from an admin and from the owner of the group', async () => {
      const a = await t.ok('POST', '/projects', dev.token, { path: 'by-admin', namespace_id: grp.id }, 201);
      const b = await t.ok('POST', '/projects', dev.token, { path: 'by-group-owner', namespace_id: sub.id }, 201);
      assert.equal((await t.api('DELETE', `/projects/${a.id}`, dev.token)).statusCode, 403);
      assert.deepEqual((await t.api('DELETE', `/projects/${a.id}`, boss.token)).json, { message: '202 Accepted' });
      const res = await t.api('DELETE', `/projects/${b.id}`, alice.token);
      assert.equal(res.statusCode, 202);
      assert.equal((await t.api('GET', `/projects/${a.id}`, boss.token)).statusCode, 404);
      assert.equal((await t.api('GET', `/projects/${b.id}`, boss.token)).statusCode, 404);
    });

    it('while snippets and files are being written in it, leaves no repository, object or ref without an owner', async () => {
      const kysely = t.app.store.kysely;
      for (let round = 0; round < 5; round++) {
        const p = await t.ok('POST', '/projects', bob.token, { path: `busy-${round}` }, 201);
        const url = `/projects/${p.id}/snippets`;
        const files = [{ file_path: 'a.txt', content: 'a' }];
        const first = await t.ok('POST', url, bob.token, { title: 'first', files }, 201);
        // Writes sent together with the delete: each either lands before it (and goes with the project)
        // or finds the project or the snippet gone (404), never a 500; and none leaves anything behind.
        const answers = await Promise.all([
          ...Array.from({ length: 4 }, (_, i) => t.api('POST', url, bob.token, { title: `s${i}`, files })),
          t.api('PUT', `${url}/${first.id}`, bob.token, {
            files: [{ action: 'update', file_path: 'a.txt', content: 'b' }],
          }),
          t.api('POST', `/projects/${p.id}/repository/files/f.txt`, bob.token, {
            branch: 'main',
            content: 'f',
            commit_message: 'f',
          }),
          t.api('DELETE', `/projects/${p.id}`, bob.token),
        ]);
        const deleted = answers.pop()!;
        const writes = answers;
        assert.equal(deleted.statusCode, 202);
        for (const w of writes) assert.ok([200, 201, 404].includes(w.statusCode), `${w.statusCode} ${w.body}`);
        assert.equal((await t.api('GET', `/projects/${p.id}`, bob.token)).statusCode, 404);
      }
      const ownerless = await kysely
        .selectFrom('git_repositories')
        .select(['id', 'kind', 'owner_id'])
        .where((eb) =>
          eb.or([
            eb.and([
              eb('kind', '=', 'snippet'),
              eb.not(
                eb.exists(
                  eb.selectFrom('snippets').select('id').whereRef('snippets.id', '=', 'git_repositories.owner_id'),
                ),
              ),
            ]),
            eb.and([
              eb('kind', '=', 'project'),
              eb.not(
                eb.exists(
                  eb.selectFrom('projects').select('id').whereRef('projects.id', '=', 'git_repositories.owner_id'),
                ),
              ),
            ]),
          ]),
        )
        .execute();
      assert.deepEqual(ownerless, []);
      for (const table of ['git_objects', 'git_refs'] as const) {
        const stray = await kysely
          .selectFrom(table)
          .select('repository_id')
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('git_repositories')
                  .select('id')
                  .whereRef('git_repositories.id', '=', `${table}.repository_id`),
              ),
            ),
          )
          .execute();
        assert.deepEqual(stray, [], table);
      }
    });
  });

  describe('POST /projects/user/:user_id', () => {
    it('is admin only', async () => {
      const res = await t.api('POST', `/projects/user/${bob.id}`, alice.token, { path: 'sneaky' });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json, FORBIDDEN);
      assert.equal((await t.api('GET', '/projects/bob%2Fsneaky', boss.token)).statusCode, 404);
    });

    it("creates in the user's namespace for an admin, owned by that user", async () => {
      const p = await t.ok('POST', `/projects/user/${bob.id}`, boss.token, { name: 'Given' }, 201);
      assert.deepEqual([p.path_with_namespace, p.namespace.full_path, p.namespace.kind], ['bob/given', 'bob', 'user']);
      const seen = await t.ok('GET', `/projects/${p.id}`, bob.token, undefined, 200);
      assert.deepEqual(seen.permissions, { project_access: lvl(50), group_access: null });
    });

    it("an admin's POST /projects into a user's namespace makes that user the owner, not the admin", async () => {
      // GitLab's Projects::CreateService#setup_authorizations: add_owner(@project.namespace.owner).
      const nsId = (await t.ok('GET', '/projects/bob%2Fgiven', boss.token, undefined, 200)).namespace.id;
      const p = await t.ok('POST', '/projects', boss.token, { path: 'placed', namespace_id: nsId }, 201);
      assert.equal(p.path_with_namespace, 'bob/placed');
      assert.deepEqual(p.permissions, { project_access: null, group_access: null });
      const seen = await t.ok('GET', `/projects/${p.id}`, bob.token, undefined, 200);
      assert.deepEqual(seen.permissions, { project_access: lvl(50), group_access: null });
      const members = await t.ok('GET', `/projects/${p.id}/members`, boss.token, undefined, 200);
      assert.deepEqual(
        members.map((m: any) => [m.username, m.access_level]),
        [['bob', 50]],
      );
    });

    it('answers 404 User Not Found for an unknown user', async () => {
      const res = await t.api('POST', '/projects/user/987654', boss.token, { path: 'x' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json, { message: '404 User Not Found' });
    });
  });

  describe('GET /projects', () => {
    const paths = async (query: string, token: string | null) => {
      const json = await t.ok('GET', `/projects?per_page=100${query}`, token, undefined, 200);
      return new Set<string>(json.map((p: any) => p.path_with_namespace));
    };

    it('membership=true lists projects where the caller is a member, directly or through a group', async () => {
      const own = await t.ok('POST', '/projects', reporter.token, { path: 'listed' }, 201);
      const got = await paths('&membership=true', reporter.token);
      assert.ok(got.has('reporter/listed') && got.has('grp/sub.x/proj.with.dots'), [...got].join());
      assert.ok(!got.has('alice/mine') && !got.has('bob/dup'));
      assert.ok((await paths('&membership=true', bob.token)).has('bob/dup'));
      assert.ok(!(await paths('&membership=true', bob.token)).has(own.path_with_namespace));
    });

    it('owned=true lists only projects the caller owns', async () => {
      const got = await paths('&owned=true', dev.token);
      assert.ok(!got.has('grp/sub.x/proj.with.dots'), 'a maintainer does not own it');
      const aliceOwned = await paths('&owned=true', alice.token);
      assert.ok(aliceOwned.has('alice/mine') && aliceOwned.has('grp/sub.x/proj.with.dots'), [...aliceOwned].join());
      assert.ok(!aliceOwned.has('bob/dup'));
    });

    it('search= matches name or path, case-insensitively, among visible projects', async () => {
      assert.deepEqual([...(await paths('&search=WITH.DOTS', null))], ['grp/sub.x/proj.with.dots']);
      assert.deepEqual([...(await paths('&search=dots', bob.token))], ['grp/sub.x/proj.with.dots']);
      assert.deepEqual([...(await paths('&search=mine', bob.token))], []);
      assert.deepEqual([...(await paths('&search=mine', alice.token))], ['alice/mine']);
    });

    it('archived, visibility, min_access_level, search_namespaces, id_after/id_before filter as GitLab', async () => {
      const open = await t.ok('POST', '/projects', bob.token, { path: 'filter-open', visibility: 'public' }, 201);
      const kept = await t.ok('POST', '/projects', bob.token, { path: 'filter-kept', visibility: 'public' }, 201);
      const shut = await t.ok('POST', '/projects', bob.token, { path: 'filter-shut', visibility: 'private' }, 201);
      await t.ok('POST', `/projects/${kept.id}/archive`, bob.token, undefined, 201);
      const ofBob = (got: Set<string>) => [...got].filter((p) => p.startsWith('bob/filter-')).sort();
      assert.deepEqual(ofBob(await paths('&archived=false', bob.token)), ['bob/filter-open', 'bob/filter-shut']);
      assert.deepEqual(ofBob(await paths('&archived=true', bob.token)), ['bob/filter-kept']);
      assert.deepEqual(ofBob(await paths('&visibility=private', bob.token)), ['bob/filter-shut']);
      assert.deepEqual(ofBob(await paths('&visibility=public', bob.token)), ['bob/filter-kept', 'bob/filter-open']);
      await t.fails('GET', '/projects?visibility=bogus', bob.token, undefined, 400, {
        error: 'visibility does not have a valid value',
      });
      // Alice is a member of none of them: at least guest, she sees none; she maintains the dotted project.
      assert.deepEqual(ofBob(await paths('&min_access_level=10', alice.token)), []);
      assert.ok((await paths('&min_access_level=50', bob.token)).has('bob/filter-shut'));
      const maintained = await paths('&min_access_level=40', dev.token);
      assert.ok(maintained.has('grp/sub.x/proj.with.dots') && !maintained.has('alice/mine'), [...maintained].join());
      await t.fails('GET', '/projects?min_access_level=7', bob.token, undefined, 400, {
        error: 'min_access_level does not have a valid value',
      });
      // The search matches the namespaces' path too only with search_namespaces.
      assert.deepEqual([...(await paths('&search=sub.x', bob.token))], []);
      assert.deepEqual(
        [...(await paths('&search=sub.x&search_namespaces=true', bob.token))],
        ['grp/sub.x/proj.with.dots'],
      );
      assert.deepEqual(ofBob(await paths(`&id_after=${open.id}&id_before=${shut.id}`, bob.token)), ['bob/filter-kept']);
      // Past the id columns' range (PostgreSQL refused the comparison: a 500): as far as any id can be.
      assert.deepEqual(ofBob(await paths('&id_after=3000000000', bob.token)), []);
      assert.deepEqual(ofBob(await paths('&id_before=-3000000000', bob.token)), []);
      assert.equal(ofBob(await paths('&id_before=3000000000', bob.token)).length, 3);
      for (const p of [open, kept, shut]) await t.ok('DELETE', `/projects/${p.id}`, bob.token, undefined, 202);
    });

    it('search= folds letters beyond ASCII as PostgreSQL lower() does, on SQLite too', async () => {
      const p = await t.ok('POST', '/projects', alice.token, { path: 'fruit', description: 'Äpfel und Öl' }, 201);
      for (const search of ['äpfel', 'ÄPFEL', 'und öl'])
        assert.deepEqual(
          [...(await paths(`&search=${encodeURIComponent(search)}`, alice.token))],
          ['alice/fruit'],
          search,
        );
      await t.ok('DELETE', `/projects/${p.id}`, alice.token, undefined, 202);
    });

    it('search= with a long text against long descriptions answers in time linear in them', async () => {
      // SQLite's LIKE '%text%' backtracks: this search took about 2.5 ms a description, on the event loop.
      // PostgreSQL's does too (about 4 ms a description, 817 ms in all), in the database server.
      const description = `${'a'.repeat(1999)}c`;
      const made: number[] = [];
      for (let i = 0; i < 200; i++)
        made.push((await t.ok('POST', '/projects', bob.token, { path: `long-${i}`, description }, 201)).id);
      const start = performance.now();
      const found = await paths(`&search=${'a'.repeat(1998)}b`, bob.token);
      const ms = performance.now() - start;
      assert.deepEqual([...found], []);
      assert.ok(ms < (TEST_DB === 'sqlite' ? 150 : 300), `${ms.toFixed(0)} ms`);
      assert.deepEqual([...(await paths(`&search=${'a'.repeat(1998)}c&owned=true`, bob.token))].length, 100);
      for (const id of made) await t.ok('DELETE', `/projects/${id}`, bob.token, undefined, 202);
    });
  });
});

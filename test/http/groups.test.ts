// Groups API (docs/gitlab-compatibility.md#groups): creation (nested), lookup, changes by owners, file template
// project.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, TEST_DB, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const FORBIDDEN = { message: '403 Forbidden' };
const GROUP_NOT_FOUND = { message: '404 Group Not Found' };

describe('groups API', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let owner: U, maint: U, dev: U, stranger: U, admin: U;
  let parent: any, child: any, secret: any;

  /** GitLab answers POST /groups failures with 400 {"message":"Failed to save group <errors>"}: the errors' text must be in it. */
  const refused = (res: { statusCode: number; json: any }, ...texts: string[]) => {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json));
    for (const text of texts)
      assert.ok(JSON.stringify(res.json.message).includes(text), `${text} in ${JSON.stringify(res.json)}`);
  };

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    [owner, maint, dev, stranger, admin] = [
      await t.user('owner'),
      await t.user('maint'),
      await t.user('dev'),
      await t.user('stranger'),
      await t.user('admin1', { admin: true }),
    ];
    parent = await t.ok(
      'POST',
      '/groups',
      owner.token,
      { name: 'Parent', path: 'parent', visibility: 'public', description: 'top' },
      201,
    );
    child = await t.ok(
      'POST',
      '/groups',
      owner.token,
      { name: 'Child', path: 'child', parent_id: parent.id, visibility: 'public' },
      201,
    );
    secret = await t.ok('POST', '/groups', owner.token, { name: 'Secret', path: 'secret' }, 201);
    await t.ok('POST', `/groups/${parent.id}/members`, owner.token, { user_id: maint.id, access_level: 40 }, 201);
    await t.ok('POST', `/groups/${parent.id}/members`, owner.token, { user_id: dev.id, access_level: 30 }, 201);
  });
  after(() => t.close());

  describe('POST /groups', () => {
    it('creates a top-level group with the documented fields', async () => {
      const expected = {
        id: parent.id,
        name: 'Parent',
        path: 'parent',
        full_name: 'Parent',
        full_path: 'parent',
        parent_id: null,
        visibility: 'public',
        web_url: `${BASE}/groups/parent`,
        file_template_project_id: null,
        description: 'top',
      };
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(parent[key], value, key);
      assert.equal(secret.visibility, 'private', 'default visibility');
    });

    it('nests a group under parent_id', async () => {
      const expected = {
        name: 'Child',
        path: 'child',
        full_name: 'Parent / Child',
        full_path: 'parent/child',
        parent_id: parent.id,
        visibility: 'public',
        web_url: `${BASE}/groups/parent/child`,
      };
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(child[key], value, key);
    });

    it('makes the creator an owner', async () => {
      for (const g of [parent, child]) {
        const m = await t.ok('GET', `/groups/${g.id}/members/${owner.id}`, owner.token, undefined, 200);
        assert.equal(m.access_level, 50);
      }
      const sub = await t.ok(
        'POST',
        '/groups',
        maint.token,
        { name: 'By Maint', path: 'by-maint', parent_id: parent.id },
        201,
      );
      assert.equal(sub.full_name, 'Parent / By Maint');
      assert.equal(
        (await t.ok('GET', `/groups/${sub.id}/members/${maint.id}`, maint.token, undefined, 200)).access_level,
        50,
      );
    });

    it('requires authentication, name and path', async () => {
      const anon = await t.api('POST', '/groups', null, { name: 'A', path: 'a' });
      assert.equal(anon.statusCode, 401);
      assert.deepEqual(anon.json, { message: '401 Unauthorized' });
      const missing = await t.api('POST', '/groups', owner.token, {});
      assert.equal(missing.statusCode, 400);
      assert.deepEqual(missing.json, { error: 'name is missing, path is missing' });
    });

    it('refuses an invalid path with 400', async () => {
      for (const path of ['-dash', 'with space', 'ends.git', 'trail.', 'a/b']) {
        refused(await t.api('POST', '/groups', owner.token, { name: 'Bad', path }), 'path');
      }
    });

    it("refuses a description over GitLab's 255 characters on create and update, with the model's message", async () => {
      const refused = { message: { description: ['is too long (maximum is 255 characters)'] } };
      await t.fails(
        'POST',
        '/groups',
        owner.token,
        { name: 'Long', path: 'long', description: 'd'.repeat(256) },
        400,
        refused,
      );
      const g = await t.ok(
        'POST',
        '/groups',
        owner.token,
        { name: 'Long', path: 'long', description: 'd'.repeat(255) },
        201,
      );
      await t.fails('PUT', `/groups/${g.id}`, owner.token, { description: 'd'.repeat(256) }, 400, refused);
      const longName = { message: { name: ['is too long (maximum is 255 characters)'] } };
      await t.fails('POST', '/groups', owner.token, { name: 'n'.repeat(256), path: 'long-name' }, 400, longName);
      await t.fails('PUT', `/groups/${g.id}`, owner.token, { name: 'n'.repeat(256) }, 400, longName);
      assert.equal((await t.ok('GET', `/groups/${g.id}`, owner.token, undefined, 200)).name, 'Long');
      assert.equal((await t.ok('GET', `/groups/${g.id}`, owner.token, undefined, 200)).description, 'd'.repeat(255));
    });

    it('refuses a taken path with 400 (groups, subgroups, usernames, projects; any case)', async () => {
      await t.ok('POST', '/projects', owner.token, { path: 'tools', namespace_id: parent.id }, 201);
      refused(
        await t.api('POST', '/groups', owner.token, { name: 'Tools', path: 'TOOLS', parent_id: parent.id }),
        'path',
        'has already been taken',
      );
      refused(
        await t.api('POST', '/groups', stranger.token, { name: 'Again', path: 'PARENT' }),
        'path',
        'has already been taken',
      );
      refused(
        await t.api('POST', '/groups', owner.token, { name: 'Again', path: 'child', parent_id: parent.id }),
        'path',
        'has already been taken',
      );
      refused(
        await t.api('POST', '/groups', owner.token, { name: 'User', path: 'stranger' }),
        'path',
        'has already been taken',
      );
    });

    it('refuses a subgroup more visible than its parent with 400', async () => {
      for (const visibility of ['internal', 'public']) {
        refused(
          await t.api('POST', '/groups', owner.token, {
            name: 'Loud',
            path: `loud-${visibility}`,
            parent_id: secret.id,
            visibility,
          }),
          `${visibility} is not allowed since the parent group has a private visibility.`,
        );
      }
      assert.equal((await t.api('GET', '/groups/secret%2Floud-public', admin.token)).statusCode, 404);
    });

    it('answers 404 for a parent the caller cannot see and 403 without maintainer access', async () => {
      const hidden = await t.api('POST', '/groups', stranger.token, { name: 'In', path: 'in', parent_id: secret.id });
      assert.equal(hidden.statusCode, 404);
      assert.deepEqual(hidden.json, GROUP_NOT_FOUND);
      const unknown = await t.api('POST', '/groups', stranger.token, { name: 'In', path: 'in', parent_id: 999999 });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json, GROUP_NOT_FOUND);
      for (const who of [stranger, dev]) {
        const res = await t.api('POST', '/groups', who.token, { name: 'In', path: 'in', parent_id: parent.id });
        assert.equal(res.statusCode, 403, who.username);
        assert.deepEqual(res.json, FORBIDDEN);
      }
      assert.equal((await t.api('GET', '/groups/parent%2Fin', admin.token)).statusCode, 404);
    });
  });

  describe('GET /groups/:id', () => {
    it('finds a group by id and by URL-encoded full path, case-insensitively', async () => {
      for (const id of [String(child.id), 'parent%2Fchild', 'Parent%2FChild']) {
        const g = await t.ok('GET', `/groups/${id}`, stranger.token, undefined, 200);
        assert.deepEqual([g.id, g.full_path, g.full_name], [child.id, 'parent/child', 'Parent / Child'], id);
      }
      assert.equal((await t.ok('GET', '/groups/parent', null, undefined, 200)).id, parent.id);
    });

    it('answers 404 Group Not Found for unknown groups and for a user namespace', async () => {
      for (const id of ['999999', 'nope', 'parent%2Fnope', 'stranger']) {
        const res = await t.api('GET', `/groups/${id}`, admin.token);
        assert.equal(res.statusCode, 404, id);
        assert.deepEqual(res.json, GROUP_NOT_FOUND);
      }
    });
  });

  describe('PUT /groups/:id', () => {
    it("a rename that renames 300 subgroups' full names moves the access epoch once, not once a row", {
      skip: TEST_DB !== 'postgres' && 'SQLite updates the epoch row in place, once a row at no cost that grows',
    }, async () => {
      const top = await t.ok('POST', '/groups', owner.token, { name: 'Many', path: 'many' }, 201);
      for (let i = 0; i < 300; i++)
        await t.ok('POST', '/groups', owner.token, { name: `S${i}`, path: `s${i}`, parent_id: top.id }, 201);
      const access = async () => (await t.app.store.db.readEpoch())!.access;
      const before = await access();
      assert.equal((await t.ok('PUT', `/groups/${top.id}`, owner.token, { name: 'Renamed' }, 200)).name, 'Renamed');
      const moved = (await access()) - before;
      // A bump a row made one PostgreSQL row take 301 versions in one transaction: quadratic, 3 s at 20,000.
      assert.ok(moved >= 1 && moved <= 3, `the access epoch moved ${moved} times`);
      const sub = await t.ok('GET', `/groups/${encodeURIComponent('many/s299')}`, owner.token, undefined, 200);
      assert.equal(sub.full_name, 'Renamed / S299');
    });

    it('is for owners and admins: maintainers and non-members get 403, hidden groups 404', async () => {
      for (const who of [maint, stranger]) {
        const res = await t.api('PUT', `/groups/${parent.id}`, who.token, { description: 'no' });
        assert.equal(res.statusCode, 403, who.username);
        assert.deepEqual(res.json, FORBIDDEN);
      }
      const hidden = await t.api('PUT', `/groups/${secret.id}`, stranger.token, { description: 'no' });
      assert.equal(hidden.statusCode, 404);
      assert.deepEqual(hidden.json, GROUP_NOT_FOUND);
      assert.equal(
        (await t.ok('PUT', `/groups/${parent.id}`, owner.token, { description: 'by owner' }, 200)).description,
        'by owner',
      );
      assert.equal(
        (await t.ok('PUT', '/groups/secret', admin.token, { description: 'by admin' }, 200)).description,
        'by admin',
      );
      assert.equal(
        (await t.ok('PUT', `/groups/${child.id}`, owner.token, { visibility: 'internal' }, 200)).visibility,
        'internal',
      );
    });

    it('renaming updates full_name below and name_with_namespace of projects', async () => {
      const grand = await t.ok(
        'POST',
        '/groups',
        owner.token,
        { name: 'Grand', path: 'grand', parent_id: child.id },
        201,
      );
      const p = await t.ok(
        'POST',
        '/projects',
        owner.token,
        { name: 'Proj', path: 'proj', namespace_id: grand.id },
        201,
      );
      const renamed = await t.ok('PUT', `/groups/${parent.id}`, owner.token, { name: 'Renamed' }, 200);
      assert.deepEqual(
        [renamed.name, renamed.path, renamed.full_name, renamed.full_path],
        ['Renamed', 'parent', 'Renamed', 'parent'],
      );
      assert.equal(
        (await t.ok('GET', `/groups/${child.id}`, owner.token, undefined, 200)).full_name,
        'Renamed / Child',
      );
      assert.equal(
        (await t.ok('GET', `/groups/${grand.id}`, owner.token, undefined, 200)).full_name,
        'Renamed / Child / Grand',
      );
      const project = await t.ok('GET', `/projects/${p.id}`, owner.token, undefined, 200);
      assert.equal(project.name_with_namespace, 'Renamed / Child / Grand / Proj');
      assert.equal(project.path_with_namespace, 'parent/child/grand/proj');
      // A name beyond ASCII, renamed back: the rest of each full name is kept by characters.
      await t.ok('PUT', `/groups/${child.id}`, owner.token, { name: 'Kïnd 😀' }, 200);
      await t.ok('PUT', `/groups/${parent.id}`, owner.token, { name: 'Parent' }, 200);
      assert.equal(
        (await t.ok('GET', `/groups/${grand.id}`, owner.token, undefined, 200)).full_name,
        'Parent / Kïnd 😀 / Grand',
      );
      await t.ok('PUT', `/groups/${child.id}`, owner.token, { name: 'Child' }, 200);
    });

    it('refuses a subgroup below 20 ancestors, as GitLab does', async () => {
      let above = await t.ok('POST', '/groups', owner.token, { name: 'L1', path: 'deep-1' }, 201);
      for (let level = 2; level <= 21; level++)
        above = await t.ok(
          'POST',
          '/groups',
          owner.token,
          { name: `L${level}`, path: `l${level}`, parent_id: above.id },
          201,
        );
      assert.equal(above.full_path.split('/').length, 21);
      await t.fails('POST', '/groups', owner.token, { name: 'L22', path: 'l22', parent_id: above.id }, 400, {
        message: { parent_id: ['has too deep level of nesting'] },
      });
    });

    it('accepts a file_template_project_id inside the hierarchy only', async () => {
      const own = await t.ok('POST', '/projects', owner.token, { path: 'templates', namespace_id: parent.id }, 201);
      const below = await t.ok(
        'POST',
        '/projects',
        owner.token,
        { path: 'more-templates', namespace_id: child.id },
        201,
      );
      const elsewhere = await t.ok(
        'POST',
        '/projects',
        owner.token,
        { path: 'elsewhere', namespace_id: secret.id },
        201,
      );
      const personal = await t.ok('POST', '/projects', owner.token, { path: 'personal' }, 201);
      assert.equal(
        (await t.ok('PUT', `/groups/${parent.id}`, owner.token, { file_template_project_id: own.id }, 200))
          .file_template_project_id,
        own.id,
      );
      assert.equal(
        (await t.ok('PUT', `/groups/${parent.id}`, owner.token, { file_template_project_id: below.id }, 200))
          .file_template_project_id,
        below.id,
      );
      for (const p of [elsewhere, personal, { id: 999999 }]) {
        const res = await t.api('PUT', `/groups/${parent.id}`, owner.token, { file_template_project_id: p.id });
        assert.equal(res.statusCode, 400, String(p.id));
        assert.ok(res.json.message.file_template_project_id, JSON.stringify(res.json));
      }
      assert.equal(
        (await t.ok('GET', `/groups/${parent.id}`, owner.token, undefined, 200)).file_template_project_id,
        below.id,
      );
    });
  });
});

// Who sees what: project and group visibility (private, internal, public) against every kind of caller. An unreadable
// project or group is always 404, never 403 (docs/gitlab-compatibility.md#project-lookup).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helper.ts';

type Level = 'private' | 'internal' | 'public';
type Caller =
  | 'anonymous'
  | 'external non-member'
  | 'signed-in non-member'
  | 'guest member'
  | 'inherited member'
  | 'admin';
const LEVELS: Level[] = ['private', 'internal', 'public'];

// Expected visibility, one row per caller: [private, internal, public].
const MATRIX: Record<Caller, [boolean, boolean, boolean]> = {
  anonymous: [false, false, true],
  'external non-member': [false, false, true],
  'signed-in non-member': [false, true, true],
  'guest member': [true, true, true],
  'inherited member': [true, true, true],
  admin: [true, true, true],
};
const CALLERS = Object.keys(MATRIX) as Caller[];

describe('visibility matrix', () => {
  let t: TestApp;
  const tokens = {} as Record<Caller, string | null>;
  const projects = {} as Record<Level, { id: number; path: string }>;
  const groups = {} as Record<Level, { id: number; path: string }>;

  before(async () => {
    t = await createTestApp();
    const owner = await t.user('owner');
    const external = await t.user('outsider', { external: true });
    const plain = await t.user('plain');
    const guest = await t.user('guest');
    const inherited = await t.user('heir');
    const admin = await t.user('admin1', { admin: true });
    Object.assign(tokens, {
      anonymous: null,
      'external non-member': external.token,
      'signed-in non-member': plain.token,
      'guest member': guest.token,
      'inherited member': inherited.token,
      admin: admin.token,
    });
    // top (public) > mid (public) > the three projects; top > the three groups. "heir" is a guest of top only.
    const top = await t.ok('POST', '/groups', owner.token, { name: 'Top', path: 'top', visibility: 'public' }, 201);
    const mid = await t.ok(
      'POST',
      '/groups',
      owner.token,
      {
        name: 'Mid',
        path: 'mid',
        parent_id: top.id,
        visibility: 'public',
      },
      201,
    );
    await t.ok('POST', `/groups/${top.id}/members`, owner.token, { user_id: inherited.id, access_level: 10 }, 201);
    for (const level of LEVELS) {
      const p = await t.ok(
        'POST',
        '/projects',
        owner.token,
        {
          path: `p-${level}`,
          namespace_id: mid.id,
          visibility: level,
        },
        201,
      );
      projects[level] = { id: p.id, path: encodeURIComponent(p.path_with_namespace) };
      await t.ok('POST', `/projects/${p.id}/members`, owner.token, { user_id: guest.id, access_level: 10 }, 201);
      const g = await t.ok(
        'POST',
        '/groups',
        owner.token,
        {
          name: `G ${level}`,
          path: `g-${level}`,
          parent_id: top.id,
          visibility: level,
        },
        201,
      );
      groups[level] = { id: g.id, path: encodeURIComponent(g.full_path) };
      await t.ok('POST', `/groups/${g.id}/members`, owner.token, { user_id: guest.id, access_level: 10 }, 201);
    }
  });
  after(() => t.close());

  describe('GET /projects/:id', () => {
    for (const caller of CALLERS) {
      LEVELS.forEach((level, i) => {
        const visible = MATRIX[caller][i];
        it(`${level} project, ${caller}: ${visible ? '200' : '404'}`, async () => {
          for (const id of [String(projects[level].id), projects[level].path]) {
            const res = await t.api('GET', `/projects/${id}`, tokens[caller]);
            if (visible) {
              assert.equal(res.statusCode, 200, res.body);
              assert.equal(res.json.id, projects[level].id);
              assert.equal(res.json.visibility, level);
            } else {
              assert.equal(res.statusCode, 404);
              assert.deepEqual(res.json, { message: '404 Project Not Found' });
            }
          }
        });
      });
    }
  });

  describe('GET /projects (list)', () => {
    for (const caller of CALLERS) {
      it(`${caller} sees ${LEVELS.filter((_, i) => MATRIX[caller][i]).join(', ')}`, async () => {
        const res = await t.api('GET', '/projects?per_page=100', tokens[caller]);
        assert.equal(res.statusCode, 200, res.body);
        const ids = new Set(res.json.map((p: { id: number }) => p.id));
        for (const [i, level] of LEVELS.entries())
          assert.equal(ids.has(projects[level].id), MATRIX[caller][i], `${level} project`);
      });
    }
  });

  describe('GET /groups/:id', () => {
    for (const caller of CALLERS) {
      LEVELS.forEach((level, i) => {
        const visible = MATRIX[caller][i];
        it(`${level} group, ${caller}: ${visible ? '200' : '404'}`, async () => {
          for (const id of [String(groups[level].id), groups[level].path]) {
            const res = await t.api('GET', `/groups/${id}`, tokens[caller]);
            if (visible) {
              assert.equal(res.statusCode, 200, res.body);
              assert.equal(res.json.id, groups[level].id);
              assert.equal(res.json.visibility, level);
            } else {
              assert.equal(res.statusCode, 404);
              assert.deepEqual(res.json, { message: '404 Group Not Found' });
            }
          }
        });
      });
    }

    it('a private group is readable by a member of a project inside it, and only by them', async () => {
      const owner = await t.user('owner2');
      const member = await t.user('projmember');
      const g = await t.ok(
        'POST',
        '/groups',
        owner.token,
        { name: 'Hidden', path: 'hidden', visibility: 'private' },
        201,
      );
      const p = await t.ok('POST', '/projects', owner.token, { path: 'inside', namespace_id: g.id }, 201);
      await t.ok('POST', `/projects/${p.id}/members`, owner.token, { user_id: member.id, access_level: 10 }, 201);
      const res = await t.api('GET', '/groups/hidden', member.token);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json.id, g.id);
      const other = await t.api('GET', `/groups/${g.id}`, tokens['signed-in non-member']);
      assert.equal(other.statusCode, 404);
      assert.deepEqual(other.json, { message: '404 Group Not Found' });
    });
  });
});

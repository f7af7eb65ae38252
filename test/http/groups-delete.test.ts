// DELETE /groups/:id (GitLab's lib/api/groups.rb: admin_group, 202 {"message":"202 Accepted"}): the group goes with
// every group and project below it, their members, snippets and repositories; nothing else goes, and nothing is
// left that belonged to them. `snippetd fsck` and the rows are the oracle of what is left.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helper.ts';
import { fsck } from '../../src/domain/fsck.ts';

const ACCEPTED = { message: '202 Accepted' };
const FILES = [
  { file_path: 'a.txt', content: 'one\n' },
  { file_path: 'dir/b.md', content: '# B\n' },
];

describe('DELETE /groups/:id', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let owner: U, maint: U, stranger: U, outsider: U, admin: U;

  /** A private group with a subgroup, a project in each (one with a snippet and a file), and a maintainer. */
  async function tree(path: string) {
    const top = await t.ok('POST', '/groups', owner.token, { name: path, path }, 201);
    const inner = await t.ok('POST', '/groups', owner.token, { name: 'inner', path: 'inner', parent_id: top.id }, 201);
    const upper = await t.ok('POST', '/projects', owner.token, { name: 'upper', namespace_id: top.id }, 201);
    const lower = await t.ok('POST', '/projects', owner.token, { name: 'lower', namespace_id: inner.id }, 201);
    const snippet = await t.ok(
      'POST',
      `/projects/${lower.id}/snippets`,
      owner.token,
      { title: 's', visibility: 'private', files: FILES },
      201,
    );
    await t.ok(
      'POST',
      `/projects/${upper.id}/repository/files/README.md`,
      owner.token,
      { branch: 'main', content: 'hi', commit_message: 'add' },
      201,
    );
    await t.ok('POST', `/groups/${top.id}/members`, owner.token, { user_id: maint.id, access_level: 40 }, 201);
    await t.ok('POST', `/projects/${lower.id}/members`, owner.token, { user_id: stranger.id, access_level: 20 }, 201);
    return { top, inner, upper, lower, snippet };
  }

  /** Rows that name a group, project or snippet no longer there, and fsck's problems. */
  async function leftovers() {
    const k = t.app.store.kysely;
    const orphanMembers = await k
      .selectFrom('members')
      .select(['source_type', 'source_id'])
      .where((eb) =>
        eb.or([
          eb.and([
            eb('source_type', '=', 'Namespace'),
            eb('source_id', 'not in', eb.selectFrom('namespaces').select('id')),
          ]),
          eb.and([
            eb('source_type', '=', 'Project'),
            eb('source_id', 'not in', eb.selectFrom('projects').select('id')),
          ]),
        ]),
      )
      .execute();
    const orphanFiles = await k
      .selectFrom('snippet_files')
      .select('snippet_id')
      .where('snippet_id', 'not in', k.selectFrom('snippets').select('id'))
      .execute();
    const report = await fsck(t.app.store, false);
    return { orphanMembers, orphanFiles, problems: report.problems };
  }
  const NOTHING_LEFT = { orphanMembers: [], orphanFiles: [], problems: [] };

  before(async () => {
    t = await createTestApp();
    [owner, maint, stranger, outsider, admin] = [
      await t.user('owner'),
      await t.user('maint'),
      await t.user('stranger'),
      await t.user('outsider'),
      await t.user('admin1', { admin: true }),
    ];
  });
  after(() => t.close());

  it('is for owners and admins: a maintainer or a member of a project in it 403, someone who cannot see it 404, a visitor 401', async () => {
    const { top, upper } = await tree('guarded');
    const maintainer = await t.api('DELETE', `/groups/${top.id}`, maint.token);
    assert.equal(maintainer.statusCode, 403);
    assert.deepEqual(maintainer.json, { message: '403 Forbidden' });
    const projectMember = await t.api('DELETE', `/groups/${top.id}`, stranger.token);
    assert.equal(projectMember.statusCode, 403);
    const hidden = await t.api('DELETE', `/groups/${top.id}`, outsider.token);
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json, { message: '404 Group Not Found' });
    const visitor = await t.api('DELETE', `/groups/${top.id}`, null);
    assert.equal(visitor.statusCode, 401);
    assert.deepEqual(visitor.json, { message: '401 Unauthorized' });
    await t.ok('GET', `/groups/${top.id}`, owner.token, undefined, 200);
    await t.ok('GET', `/projects/${upper.id}`, owner.token, undefined, 200);
  });

  it('an owner deletes the group with every group, project, snippet and member below it; the rest stays', async () => {
    const kept = await tree('kept');
    const gone = await tree('doomed');
    const res = await t.api('DELETE', '/groups/doomed', owner.token);
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json, ACCEPTED);

    for (const [route, message] of [
      [`/groups/${gone.top.id}`, '404 Group Not Found'],
      [`/groups/${gone.inner.id}`, '404 Group Not Found'],
      [`/projects/${gone.upper.id}`, '404 Project Not Found'],
      [`/projects/${gone.lower.id}`, '404 Project Not Found'],
      [`/projects/${gone.lower.id}/snippets/${gone.snippet.id}`, '404 Project Not Found'],
    ])
      assert.deepEqual(
        await t.expect('GET', route, admin.token, undefined, 404).then((r) => r.json),
        { message },
        route,
      );
    const all = await t.ok('GET', '/snippets/all?per_page=100', admin.token, undefined, 200);
    assert.ok(!all.some((s: any) => s.id === gone.snippet.id));
    const mine = await t.ok('GET', '/groups?per_page=100', maint.token, undefined, 200);
    const paths = mine.map((g: any) => g.full_path);
    assert.deepEqual(paths.filter((p: string) => p.startsWith('doomed') || p.startsWith('kept')).sort(), [
      'kept',
      'kept/inner',
    ]);
    const repo = await t.gitDir('project', gone.upper.id);
    assert.equal(repo, null);

    // The other group is whole.
    for (const route of [
      `/groups/${kept.top.id}`,
      `/groups/${kept.inner.id}`,
      `/projects/${kept.upper.id}`,
      `/projects/${kept.lower.id}/snippets/${kept.snippet.id}`,
      `/projects/${kept.upper.id}/repository/files/README.md/raw?ref=main`,
    ])
      await t.expect('GET', route, owner.token, undefined, 200);
    const members = await t.ok('GET', `/groups/${kept.top.id}/members`, owner.token, undefined, 200);
    assert.deepEqual(members.map((m: any) => m.username).sort(), ['maint', 'owner']);
    assert.deepEqual(await leftovers(), NOTHING_LEFT);

    // Its paths are free again.
    const again = await t.ok('POST', '/groups', owner.token, { name: 'doomed', path: 'doomed' }, 201);
    await t.ok('POST', '/projects', owner.token, { name: 'upper', namespace_id: again.id }, 201);
  });

  it('a subgroup goes alone: its parent and its siblings stay', async () => {
    const { top, inner, upper } = await tree('parented');
    const sibling = await t.ok('POST', '/groups', owner.token, { name: 'sib', path: 'sib', parent_id: top.id }, 201);
    assert.deepEqual(await t.ok('DELETE', `/groups/${inner.id}`, owner.token, undefined, 202), ACCEPTED);
    await t.expect('GET', `/groups/${inner.id}`, owner.token, undefined, 404);
    for (const route of [`/groups/${top.id}`, `/groups/${sibling.id}`, `/projects/${upper.id}`])
      await t.expect('GET', route, owner.token, undefined, 200);
    const below = await t.ok('GET', `/groups/${top.id}/descendant_groups`, owner.token, undefined, 200);
    assert.deepEqual(
      below.map((g: any) => g.full_path),
      ['parented/sib'],
    );
    assert.deepEqual(await leftovers(), NOTHING_LEFT);
  });

  it('an administrator may delete any group', async () => {
    const { top } = await tree('admins');
    assert.deepEqual(await t.ok('DELETE', `/groups/${top.id}`, admin.token, undefined, 202), ACCEPTED);
    await t.expect('GET', `/groups/${top.id}`, admin.token, undefined, 404);
  });

  it('what is created inside the group while it is deleted goes with it or is refused, never left behind', async () => {
    // The writes start a little later each round, to land before, during and after the delete's transactions.
    for (let round = 0; round < 12; round++) {
      const { top, inner, lower } = await tree(`racing${round}`);
      const later = <T>(write: () => Promise<T>) =>
        new Promise<T>((resolve) => setTimeout(() => resolve(write()), round));
      const [deleted, project, subgroup, laterProject, member, projectMember, snippet] = await Promise.all([
        t.api('DELETE', `/groups/${top.id}`, owner.token),
        later(() => t.api('POST', '/projects', owner.token, { name: 'late', namespace_id: inner.id })),
        later(() =>
          t.api('POST', '/groups', owner.token, { name: 'late group', path: 'late-group', parent_id: inner.id }),
        ),
        later(() => t.api('POST', '/projects', owner.token, { name: 'later', namespace_id: top.id })),
        later(() =>
          t.api('POST', `/groups/${inner.id}/members`, owner.token, { user_id: outsider.id, access_level: 30 }),
        ),
        later(() =>
          t.api('POST', `/projects/${lower.id}/members`, owner.token, { user_id: outsider.id, access_level: 30 }),
        ),
        later(() =>
          t.api('POST', `/projects/${lower.id}/snippets`, owner.token, {
            title: 'late',
            visibility: 'private',
            files: [{ file_path: 'late.txt', content: 'late' }],
          }),
        ),
      ]);
      assert.equal(deleted.statusCode, 202, deleted.body);
      for (const res of [project, laterProject])
        if (res.statusCode === 201) await t.expect('GET', `/projects/${res.json.id}`, admin.token, undefined, 404);
        else assert.deepEqual([res.statusCode, res.json], [400, { message: { namespace: ['is not valid'] } }]);
      if (subgroup.statusCode === 201)
        await t.expect('GET', `/groups/${subgroup.json.id}`, admin.token, undefined, 404);
      else assert.equal(subgroup.statusCode, 404, subgroup.body);
      for (const res of [member, projectMember]) assert.ok([201, 404].includes(res.statusCode), res.body);
      if (snippet.statusCode === 201)
        await t.expect('GET', `/projects/${lower.id}/snippets/${snippet.json.id}`, admin.token, undefined, 404);
      else assert.equal(snippet.statusCode, 404, snippet.body);
      assert.deepEqual(await leftovers(), NOTHING_LEFT);
    }
  });
});

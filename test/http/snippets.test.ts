// Project snippets: create, get, list, update (file actions and deprecated params), delete, with every snippet a bare
// git repository (docs/gitlab-compatibility.md#project-snippets and decisions #d1 to #d5, #d7, #d11, #d12, #d14).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const KEYS = [
  'id',
  'title',
  'description',
  'visibility',
  'author',
  'created_at',
  'updated_at',
  'project_id',
  'web_url',
  'raw_url',
  'ssh_url_to_repo',
  'http_url_to_repo',
  'file_name',
  'files',
  'imported',
  'imported_from',
];
const INVALID = { message: { error: 'Snippet actions have invalid data' } };
const REPO_ERROR = { message: { error: 'Repository Error updating the snippet' } };
const f = (file_path: string, content: string) => ({ file_path, content });

describe('project snippets API', () => {
  let t: TestApp;
  let alice: Awaited<ReturnType<TestApp['user']>>;
  let aliceUser: any, proj: any, other: any;
  const create = (payload: object, p = proj) =>
    t.ok('POST', `/projects/${p.id}/snippets`, alice.token, { title: 'T', ...payload }, 201);
  const update = (s: any, payload: object) =>
    t.ok('PUT', `/projects/${proj.id}/snippets/${s.id}`, alice.token, payload, 200);
  /** git on the snippet's repository as the database holds it (this node's serving cache, brought up to date). */
  const git = async (id: number, ...args: string[]) => {
    const r = spawnSync('git', ['--git-dir', (await t.gitDir('snippet', id))!, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const log = async (id: number) => (await git(id, 'log', '--format=%s', 'main')).trim().split('\n');
  const tree = async (id: number) =>
    (await git(id, 'ls-tree', '-r', '--name-only', 'main')).trim().split('\n').filter(Boolean);
  const show = (id: number, file: string) => git(id, 'show', `main:${file}`);
  const count = async (p = proj) =>
    (await t.ok('GET', `/projects/${p.id}/snippets?per_page=100`, alice.token, undefined, 200)).length;
  /** The snippet repositories the database holds. */
  const repos = async () => (await t.app.store.git.all()).filter((r) => r.kind === 'snippet').map((r) => r.owner_id);
  /** Everything a failed request must leave alone. */
  const state = async (s: any) => ({
    json: await t.ok('GET', `/projects/${proj.id}/snippets/${s.id}`, alice.token, undefined, 200),
    log: await git(s.id, 'log', '--format=%H %s', 'main'),
    tree: await tree(s.id),
    files: await Promise.all((await tree(s.id)).map((p) => show(s.id, p))),
  });

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    alice = await t.user('alice');
    aliceUser = await t.ok('GET', `/users/${alice.id}`, alice.token, undefined, 200);
    proj = await t.ok('POST', '/projects', alice.token, { path: 'proj' }, 201);
    other = await t.ok('POST', '/projects', alice.token, { path: 'other' }, 201);
  });
  after(async () => {
    for (const id of await repos()) {
      const r = spawnSync('git', ['--git-dir', (await t.gitDir('snippet', id))!, 'fsck', '--strict'], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `fsck snippet ${id}: ${r.stdout}${r.stderr}`);
    }
    await t.close();
  });

  describe('POST', () => {
    it('creates a multi-file snippet: the exact object, files in path order, one "Initial commit" on main', async () => {
      const res = await t.api('POST', `/projects/${proj.id}/snippets`, alice.token, {
        title: 'Multi',
        description: 'desc',
        files: [f('b.txt', 'B'), f('a/z.rb', 'Z'), f('a.txt', 'A')],
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['content-type'], 'application/json');
      const s = res.json;
      assert.deepEqual(Object.keys(s), KEYS);
      assert.deepEqual(Object.keys(s.author), [
        'id',
        'username',
        'name',
        'state',
        'locked',
        'avatar_url',
        'web_url',
        'email',
        'created_at',
      ]);
      const web = `${BASE}/alice/proj/-/snippets/${s.id}`;
      assert.match(s.created_at, ISO);
      assert.deepEqual(s, {
        id: s.id,
        title: 'Multi',
        description: 'desc',
        visibility: 'private',
        author: {
          id: alice.id,
          username: 'alice',
          name: 'ALICE',
          state: 'active',
          locked: false,
          avatar_url: null,
          web_url: `${BASE}/alice`,
          email: '',
          created_at: aliceUser.created_at,
        },
        created_at: s.created_at,
        updated_at: s.created_at,
        project_id: proj.id,
        web_url: web,
        raw_url: `${web}/raw`,
        ssh_url_to_repo: `git@gitlab.example.com:alice/proj/snippets/${s.id}.git`,
        http_url_to_repo: `${BASE}/alice/proj/snippets/${s.id}.git`,
        file_name: 'a.txt',
        files: ['a.txt', 'a/z.rb', 'b.txt'].map((p) => ({ path: p, raw_url: `${web}/raw/main/${p}` })),
        imported: false,
        imported_from: 'none',
      });
      assert.deepEqual(await t.ok('GET', `/projects/${proj.id}/snippets/${s.id}`, alice.token, undefined, 200), s);
      assert.deepEqual(await log(s.id), ['Initial commit']);
      assert.deepEqual(await tree(s.id), ['a.txt', 'a/z.rb', 'b.txt']);
      assert.equal((await git(s.id, 'symbolic-ref', 'HEAD')).trim(), 'refs/heads/main');
      assert.equal(
        (await git(s.id, 'log', '--format=%an <%ae>|%cn <%ce>', 'main')).trim(),
        'ALICE <alice@example.com>|ALICE <alice@example.com>',
      );
      assert.equal(await show(s.id, 'a/z.rb'), 'Z');
    });

    it('takes the default visibility from the application settings (docs/gitlab-compatibility.md#d1)', async () => {
      const settings = (v: string) =>
        t.request({
          method: 'PUT',
          url: '/api/v4/application/settings',
          token: ROOT_TOKEN,
          payload: { default_snippet_visibility: v },
        });
      assert.equal((await settings('internal')).statusCode, 200);
      assert.equal((await create({ files: [f('x', '1')] })).visibility, 'internal');
      assert.equal((await settings('private')).statusCode, 200);
      assert.equal((await create({ files: [f('x', '1')] })).visibility, 'private');
      assert.equal((await create({ visibility: 'public', files: [f('x', '1')] })).visibility, 'public');
    });

    it('accepts form-encoded bodies with Rack array syntax (docs/gitlab-compatibility.md#d12)', async () => {
      const body =
        'title=Form&visibility=internal&files[][file_path]=y.rb&files[][content]=puts+2&files[][file_path]=x.rb&files[][content]=puts%201';
      const res = await t.api('POST', `/projects/${proj.id}/snippets`, alice.token, body, {
        'content-type': 'application/x-www-form-urlencoded',
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(
        [res.json.title, res.json.visibility, res.json.file_name, res.json.files.map((x: any) => x.path)],
        ['Form', 'internal', 'x.rb', ['x.rb', 'y.rb']],
      );
      assert.deepEqual([await show(res.json.id, 'x.rb'), await show(res.json.id, 'y.rb')], ['puts 1', 'puts 2']);
    });

    it('accepts the deprecated content + file_name; an empty file_name is snippetfile1.txt; file_name with files is ignored (docs/gitlab-compatibility.md#d5)', async () => {
      const legacy = await create({ content: 'puts 1', file_name: 'legacy.rb' });
      assert.deepEqual(
        [legacy.file_name, legacy.files.map((x: any) => x.path), await show(legacy.id, 'legacy.rb')],
        ['legacy.rb', ['legacy.rb'], 'puts 1'],
      );
      assert.equal((await create({ content: 'x', file_name: '' })).file_name, 'snippetfile1.txt');
      assert.deepEqual(
        (await create({ file_name: 'ignored.rb', files: [f('kept.rb', 'k')] })).files.map((x: any) => x.path),
        ['kept.rb'],
      );
    });

    it('answers every validation message literally and writes nothing', async () => {
      const before = [await count(), await repos()];
      const cases: [object, string][] = [
        [{ title: undefined, files: [f('a', 'b')] }, 'title is missing'],
        [{ title: '   ', files: [f('a', 'b')] }, 'title is empty'],
        [{ files: [f('a', 'b')], content: 'c', file_name: 'n' }, 'files, content are mutually exclusive'],
        [{}, 'files, content are missing, exactly one parameter must be provided'],
        [{ content: 'c' }, 'file_name is missing'],
        [{ content: '', file_name: 'n' }, 'content is empty'],
        [{ files: [f('../../etc/passwd', 'x')] }, 'files[0][file_path] should be a valid file path'],
        [{ files: [f('/abs', 'x')] }, 'files[0][file_path] should be a valid file path'],
        [{ files: [f('%2e%2e%2fetc%2fpasswd', 'x')] }, 'files[0][file_path] should be a valid file path'],
        [{ files: [f('a\nb', 'x')] }, 'files[0][file_path] should be a valid file path'],
        [{ files: [f('ok', 'x'), f('a/../../b', 'x')] }, 'files[1][file_path] should be a valid file path'],
        [
          { files: [{ file_path: null, content: 'x' }] },
          'files[0][file_path] should be a valid file path, files[0][file_path] is empty',
        ],
        [{ files: [{ content: 'x' }] }, 'files[0][file_path] is missing'],
        [{ files: [f('a', '')] }, 'files[0][content] is empty'],
        [{ files: [{ file_path: 'a', content: null }] }, 'files[0][content] is empty'],
        [{ files: [f('a', 'b')], visibility: 'secret' }, 'visibility does not have a valid value'],
      ];
      for (const [payload, error] of cases)
        await t.fails('POST', `/projects/${proj.id}/snippets`, alice.token, { title: 'T', ...payload }, 400, { error });
      assert.deepEqual([await count(), await repos()], before);
    });

    it('enforces the title length and the file count limit (docs/gitlab-compatibility.md#d4), writing nothing', async () => {
      const before = [await count(), await repos()];
      await t.fails(
        'POST',
        `/projects/${proj.id}/snippets`,
        alice.token,
        { title: 'x'.repeat(256), files: [f('a', 'b')] },
        400,
        {
          message: { error: 'Title is too long (maximum is 255 characters)' },
        },
      );
      const eleven = Array.from({ length: 11 }, (_, i) => f(`f${i}`, 'x'));
      await t.fails('POST', `/projects/${proj.id}/snippets`, alice.token, { files: eleven, title: 'T' }, 400, {
        message: { error: "Repository Error creating the snippet - Snippet can't have more than 10 files" },
      });
      await t.fails(
        'POST',
        `/projects/${proj.id}/snippets`,
        alice.token,
        { title: 'T', files: [f('x/.git/config', 'x')] },
        400,
        {
          message: { error: 'Repository Error creating the snippet - Invalid file name' },
        },
      );
      await t.fails(
        'POST',
        `/projects/${proj.id}/snippets`,
        alice.token,
        { title: 'T', files: [f('d', '1'), f('d', '2')] },
        400,
        {
          message: { error: 'Repository Error creating the snippet' },
        },
      );
      assert.deepEqual([await count(), await repos()], before);
      assert.equal((await create({ title: 'x'.repeat(255), files: eleven.slice(1) })).files.length, 10);
    });
  });

  describe('GET', () => {
    it('single: 404 "Not found" for unknown ids and other projects\' snippets; snippet_id must be an integer', async () => {
      const s = await create({ files: [f('a', 'b')] }, other);
      for (const url of [`/projects/${proj.id}/snippets/999999`, `/projects/${proj.id}/snippets/${s.id}`])
        await t.fails('GET', url, alice.token, undefined, 404, { message: '404 Not found' });
      await t.fails('GET', `/projects/${proj.id}/snippets/abc`, alice.token, undefined, 400, {
        error: 'snippet_id is invalid',
      });
    });

    it('list: newest first, paginated with the standard headers; needs authentication', async () => {
      const p = await t.ok('POST', '/projects', alice.token, { path: 'listing', visibility: 'public' }, 201);
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await create({ title: `L${i}`, files: [f('a', `${i}`)] }, p)).id);
      const res = await t.api('GET', `/projects/${p.id}/snippets?per_page=2`, alice.token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json.map((s: any) => s.id),
        [ids[2], ids[1]],
      );
      assert.deepEqual(Object.keys(res.json[0]), KEYS);
      const link = (page: number) => `<${BASE}/api/v4/projects/${p.id}/snippets?id=${p.id}&page=${page}&per_page=2>`;
      const h = res.headers;
      assert.deepEqual(
        [h['x-total'], h['x-total-pages'], h['x-per-page'], h['x-page'], h['x-next-page'], h['x-prev-page']],
        ['3', '2', '2', '1', '2', ''],
      );
      assert.equal(h.link, `${link(2)}; rel="next", ${link(1)}; rel="first", ${link(2)}; rel="last"`);
      const page2 = await t.api('GET', `/projects/${p.id}/snippets?per_page=2&page=2`, alice.token);
      assert.deepEqual(
        page2.json.map((s: any) => s.id),
        [ids[0]],
      );
      const anon = await t.api('GET', `/projects/${p.id}/snippets`, null);
      assert.deepEqual([anon.statusCode, anon.json], [401, { message: '401 Unauthorized' }]);
    });
  });

  describe('PUT', () => {
    it('applies create, update, delete and move in one "Update snippet" commit and bumps updated_at', async () => {
      const s = await create({ files: [f('a.txt', 'A'), f('b.txt', 'B'), f('c.txt', 'C')] });
      await new Promise((r) => setTimeout(r, 5));
      const u = await update(s, {
        files: [
          { action: 'create', file_path: 'd/new.rb', content: 'N' },
          { action: 'update', file_path: 'a.txt', content: 'A2' },
          { action: 'delete', file_path: 'b.txt' },
          { action: 'move', previous_path: 'c.txt', file_path: 'c2.txt' },
        ],
      });
      assert.deepEqual(Object.keys(u), KEYS);
      assert.deepEqual([u.file_name, u.files.map((x: any) => x.path)], ['a.txt', ['a.txt', 'c2.txt', 'd/new.rb']]);
      assert.ok(u.updated_at > s.updated_at, `${u.updated_at} > ${s.updated_at}`);
      assert.equal(u.created_at, s.created_at);
      assert.deepEqual(await log(s.id), ['Update snippet', 'Initial commit']);
      assert.deepEqual(await Promise.all((await tree(s.id)).map(async (p) => [p, await show(s.id, p)])), [
        ['a.txt', 'A2'],
        ['c2.txt', 'C'],
        ['d/new.rb', 'N'],
      ]);
      await update(s, {
        files: [
          { action: 'move', previous_path: 'c2.txt', file_path: 'c3.txt', content: 'C3' },
          { action: 'create', content: 'gen' },
        ],
      });
      assert.deepEqual(await Promise.all((await tree(s.id)).map(async (p) => [p, await show(s.id, p)])), [
        ['a.txt', 'A2'],
        ['c3.txt', 'C3'],
        ['d/new.rb', 'N'],
        ['snippetfile1.txt', 'gen'],
      ]);
      assert.deepEqual(await log(s.id), ['Update snippet', 'Update snippet', 'Initial commit']);
    });

    it('a title/description/visibility update makes no commit but bumps updated_at', async () => {
      const s = await create({ files: [f('a', '1')] });
      const head = await git(s.id, 'rev-parse', 'main');
      await new Promise((r) => setTimeout(r, 5));
      const u = await update(s, { title: 'New', description: '', visibility: 'internal' });
      assert.deepEqual([u.title, u.description, u.visibility], ['New', '', 'internal']);
      assert.ok(u.updated_at > s.updated_at);
      assert.equal(await git(s.id, 'rev-parse', 'main'), head);
      assert.deepEqual(await log(s.id), ['Initial commit']);
    });

    it('answers validation errors (400) and invalid actions (422) without touching anything', async () => {
      const s = await create({ files: [f('a.txt', 'A'), f('b.txt', 'B')] });
      const snap = await state(s);
      const url = `/projects/${proj.id}/snippets/${s.id}`;
      const v = (files: object[]) => ({ title: 'Changed', files });
      await t.fails('PUT', url, alice.token, {}, 400, {
        error:
          'content, description, files, file_name, title, visibility are missing, at least one parameter must be provided',
      });
      await t.fails('PUT', url, alice.token, { title: '' }, 400, { error: 'title is empty' });
      await t.fails('PUT', url, alice.token, { visibility: 'x' }, 400, {
        error: 'visibility does not have a valid value',
      });
      await t.fails(
        'PUT',
        url,
        alice.token,
        { files: [{ action: 'create', file_path: 'x', content: 'x' }], content: 'c' },
        400,
        {
          error: 'files, content are mutually exclusive',
        },
      );
      await t.fails(
        'PUT',
        url,
        alice.token,
        { files: [{ action: 'create', file_path: 'x', content: 'x' }], file_name: 'c' },
        400,
        {
          error: 'files, file_name are mutually exclusive',
        },
      );
      await t.fails('PUT', url, alice.token, v([{ file_path: 'x', content: 'x' }]), 400, {
        error: 'files[0][action] is missing',
      });
      await t.fails('PUT', url, alice.token, v([{ action: 'rename', file_path: 'x' }]), 400, {
        error: 'files[0][action] does not have a valid value',
      });
      await t.fails(
        'PUT',
        url,
        alice.token,
        v([{ action: 'update', file_path: '../../etc/passwd', content: 'x' }]),
        400,
        {
          error: 'files[0][file_path] should be a valid file path',
        },
      );
      await t.fails(
        'PUT',
        url,
        alice.token,
        v([{ action: 'move', previous_path: '/etc/passwd', file_path: 'x' }]),
        400,
        {
          error: 'files[0][previous_path] should be a valid file path',
        },
      );
      await t.fails('PUT', `/projects/${proj.id}/snippets/abc`, alice.token, { title: 'x' }, 400, {
        error: 'snippet_id is invalid',
      });
      for (const bad of [
        { action: 'create', file_path: 'n' },
        { action: 'create', file_path: 'n', content: '' },
        { action: 'update', content: 'x' },
        { action: 'update', file_path: 'a.txt' },
        { action: 'update', file_path: 'a.txt', previous_path: 'b.txt', content: 'x' },
        { action: 'delete' },
        { action: 'move', file_path: 'z' },
        { action: 'move', previous_path: 'a.txt', file_path: 'a.txt' },
      ])
        await t.fails(
          'PUT',
          url,
          alice.token,
          v([{ action: 'create', file_path: 'fine', content: 'f' }, bad]),
          422,
          INVALID,
        );
      assert.deepEqual(await state(s), snap);
    });

    it('answers repository errors (400) all-or-nothing: files, title and git log unchanged', async () => {
      const s = await create({ files: [f('a.txt', 'A'), f('b.txt', 'B')] });
      const snap = await state(s);
      const url = `/projects/${proj.id}/snippets/${s.id}`;
      const v = (last: object) => ({
        title: 'Changed',
        files: [{ action: 'update', file_path: 'a.txt', content: 'CHANGED' }, last],
      });
      for (const bad of [
        { action: 'create', file_path: 'b.txt', content: 'x' },
        { action: 'update', file_path: 'nope', content: 'x' },
        { action: 'delete', file_path: 'nope' },
        { action: 'move', previous_path: 'nope', file_path: 'z' },
        { action: 'move', previous_path: 'a.txt', file_path: 'b.txt' },
      ])
        await t.fails('PUT', url, alice.token, v(bad), 400, REPO_ERROR);
      for (const name of ['x/.git/config', '.git/hooks/post-update', 'a//b']) {
        await t.fails('PUT', url, alice.token, v({ action: 'create', file_path: name, content: 'x' }), 400, {
          message: { error: 'Repository Error updating the snippet - Invalid file name' },
        });
      }
      // Every file deleted: refused, as a push doing so is (it left a snippet whose raw URL answered 500).
      const none = [
        { action: 'delete', file_path: 'a.txt' },
        { action: 'delete', file_path: 'b.txt' },
      ];
      await t.fails('PUT', url, alice.token, { files: none }, 400, {
        message: { error: 'Repository Error updating the snippet - A snippet needs at least one file' },
      });
      const nine = Array.from({ length: 9 }, (_, i) => ({ action: 'create', file_path: `n${i}`, content: 'x' }));
      await t.fails('PUT', url, alice.token, { title: 'Changed', files: nine }, 400, {
        message: { error: "Repository Error updating the snippet - Snippet can't have more than 10 files" },
      });
      // 10,000 unnamed files (each named after the highest snippetfile<N>.txt so far): too many, said at once.
      const unnamed = Array.from({ length: 10_000 }, () => ({ action: 'create', content: 'x' }));
      const started = performance.now();
      await t.fails('PUT', url, alice.token, { files: unnamed }, 400, {
        message: { error: "Repository Error updating the snippet - Snippet can't have more than 10 files" },
      });
      // Linear: milliseconds; naming each against all before it took about 6 s.
      assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
      // As many deletions after them let the creates through (helper-63): each unnamed create looked at every
      // file before it, 3.8 s on the event loop.
      const deletes = Array.from({ length: 9_990 }, (_, i) => ({ action: 'delete', file_path: `nope${i}` }));
      const later = performance.now();
      const refused = await t.api('PUT', url, alice.token, { files: [...unnamed.slice(0, 9_990), ...deletes] });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.ok(performance.now() - later < 1500, `${performance.now() - later} ms`);
      assert.deepEqual(await state(s), snap);
    });

    it('deprecated content/file_name on a single-file snippet renames and replaces; 400 on multi-file', async () => {
      const s = await create({ files: [f('one.rb', 'v1')] });
      assert.deepEqual(
        (await update(s, { file_name: 'two.rb' })).files.map((x: any) => x.path),
        ['two.rb'],
      );
      assert.deepEqual([await tree(s.id), await show(s.id, 'two.rb')], [['two.rb'], 'v1']);
      assert.equal((await update(s, { content: 'v2' })).file_name, 'two.rb');
      assert.deepEqual([await tree(s.id), await show(s.id, 'two.rb')], [['two.rb'], 'v2']);
      assert.equal((await update(s, { content: 'v3', file_name: 'three.rb' })).file_name, 'three.rb');
      assert.deepEqual([await tree(s.id), await show(s.id, 'three.rb')], [['three.rb'], 'v3']);
      assert.deepEqual(await log(s.id), ['Update snippet', 'Update snippet', 'Update snippet', 'Initial commit']);
      // An empty file_name names the file as an unnamed one (GitLab's snippetfile<N>.txt), once.
      assert.equal((await update(s, { file_name: '' })).file_name, 'snippetfile1.txt');
      assert.deepEqual([await tree(s.id), await show(s.id, 'snippetfile1.txt')], [['snippetfile1.txt'], 'v3']);
      assert.equal((await update(s, { file_name: '', content: 'v4' })).file_name, 'snippetfile1.txt');
      assert.deepEqual([await tree(s.id), await show(s.id, 'snippetfile1.txt')], [['snippetfile1.txt'], 'v4']);
      assert.equal(
        (await t.must('GET', `/projects/${proj.id}/snippets/${s.id}`, alice.token)).file_name,
        'snippetfile1.txt',
      );
      assert.equal((await log(s.id)).length, 6);
      const multi = await create({ files: [f('a', '1'), f('b', '2')] });
      const snap = await state(multi);
      const error = {
        message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' },
      };
      for (const payload of [{ content: 'x' }, { file_name: 'x' }, { file_name: '', title: 'Changed' }])
        await t.fails('PUT', `/projects/${proj.id}/snippets/${multi.id}`, alice.token, payload, 400, error);
      assert.deepEqual(await state(multi), snap);
    });
  });

  describe('DELETE', () => {
    it('412 when modified since If-Unmodified-Since; 204 and the repository is gone; then 404 everywhere', async () => {
      const s = await create({ files: [f('a', '1')] });
      const url = `/projects/${proj.id}/snippets/${s.id}`;
      const stale = await t.api('DELETE', url, alice.token, undefined, {
        'if-unmodified-since': new Date(Date.now() - 3600_000).toUTCString(),
      });
      assert.deepEqual([stale.statusCode, stale.json], [412, { message: '412 Precondition Failed' }]);
      assert.ok((await repos()).includes(s.id));
      await t.ok('GET', url, alice.token, undefined, 200);
      const res = await t.api('DELETE', url, alice.token, '', { 'content-type': 'application/json' });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      assert.equal((await repos()).includes(s.id), false);
      await t.fails('GET', url, alice.token, undefined, 404, { message: '404 Not found' });
      for (const method of ['DELETE', 'PUT'])
        await t.fails(method, url, alice.token, method === 'PUT' ? { title: 'x' } : undefined, 404, {
          message: '404 Snippet Not Found',
        });
      await t.fails('GET', `${url}/raw`, alice.token, undefined, 404, { message: '404 Snippet Not Found' });
    });
  });
});

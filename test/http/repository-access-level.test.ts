// A project's repository_access_level (docs/gitlab-compatibility.md#repository-access-level): stored, answered
// and enforced for every kind of viewer on the repository API, git over HTTP and the project's pages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, ROOT_TOKEN, runGit, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const LEVELS = ['enabled', 'private', 'disabled'] as const;
const FORBIDDEN = { message: '403 Forbidden' };
const NO_PROJECT = { message: '404 Project Not Found' };
const NO_REPOSITORY = { message: '404 Repository Not Found' };
const DOWNLOAD_DENIED = 'You are not allowed to download code from this project.\n';
const PUSH_DENIED = 'You are not allowed to push code to this project.\n';
const pathOf = (url: string) => new URL(url).pathname;

type Level = (typeof LEVELS)[number];
interface Viewer {
  name: string;
  id?: number;
  token: string | null;
  cookie?: string;
  admin?: boolean;
  /** The membership in every project of the test (0: none). */
  role: number;
}

/**
 * GitLab's rules, written out from its source (app/policies/project_policy.rb, app/models/project_feature.rb):
 * the feature is open to everyone when enabled, to members (guest and up) and administrators when private, and to
 * nobody, administrators included, when disabled; reading code then needs what it always needs (reporter and up
 * or an administrator; anyone of a public project).
 */
function expected(viewer: Viewer, visibility: 'public' | 'private', level: Level) {
  const readProject = visibility === 'public' || viewer.admin === true || viewer.role >= 10;
  const feature = level === 'enabled' || (level === 'private' && (viewer.admin === true || viewer.role >= 10));
  const code = feature && (viewer.admin === true || viewer.role >= 20 || visibility === 'public');
  return { readProject, feature, code };
}

describe('repository_access_level', () => {
  let t: TestApp;
  const viewers: Viewer[] = [];
  const projects: { id: number; web_url: string; path: string; visibility: 'public' | 'private' }[] = [];
  let developer: Viewer;
  let anyProject: { id: number; path: string };
  let host: string;
  let work: string;

  async function person(username: string, role: number, admin = false): Promise<Viewer> {
    const user = await t.must('POST', '/users', ROOT_TOKEN, {
      username,
      email: `${username}@example.com`,
      name: username,
      password: PASSWORD,
      admin,
    });
    const token = await t.must('POST', `/users/${user.id}/personal_access_tokens`, ROOT_TOKEN, {
      name: 't',
      scopes: ['api'],
    });
    const viewer = {
      name: username,
      id: user.id,
      token: token.token,
      cookie: await signInCookie(t, username, PASSWORD),
      admin,
      role,
    };
    viewers.push(viewer);
    return viewer;
  }

  before(async () => {
    t = await createTestApp();
    viewers.push({ name: 'anonymous', token: null, role: 0 });
    await person('outsider', 0);
    const members = [await person('guest', 10), await person('reporter', 20), await person('developer', 30)];
    developer = members[2];
    await person('boss', 0, true);
    for (const visibility of ['public', 'private'] as const) {
      const p = await t.must('POST', '/projects', ROOT_TOKEN, {
        name: `${visibility}-code`,
        visibility,
        initialize_with_readme: true,
      });
      await t.must('POST', `/projects/${p.id}/repository/tags`, ROOT_TOKEN, { tag_name: 'v1', ref: 'main' });
      for (const m of members)
        await t.must('POST', `/projects/${p.id}/members`, ROOT_TOKEN, {
          user_id: m.id,
          access_level: m.role,
        });
      projects.push({ id: p.id, web_url: p.web_url, path: p.path_with_namespace, visibility });
    }
    anyProject = projects[0];
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    host = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-access-level-'));
  });
  after(async () => {
    await t?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("is 'enabled' unless given, taken on create and update, and answered in the project entity", async () => {
    const made = await t.ok('POST', '/projects', ROOT_TOKEN, { name: 'fields', visibility: 'public' }, 201);
    assert.equal(made.repository_access_level, 'enabled');
    // In GitLab's key order: after snippets_enabled, before snippets_access_level.
    const keys = Object.keys(made);
    assert.deepEqual(keys.slice(keys.indexOf('snippets_enabled'), keys.indexOf('snippets_enabled') + 3), [
      'snippets_enabled',
      'repository_access_level',
      'snippets_access_level',
    ]);
    const hidden = await t.ok(
      'POST',
      '/projects',
      ROOT_TOKEN,
      { name: 'hidden', visibility: 'public', repository_access_level: 'private' },
      201,
    );
    assert.equal(hidden.repository_access_level, 'private');
    assert.equal((await t.must('GET', `/projects/${hidden.id}`, null)).repository_access_level, 'private');
    for (const level of ['disabled', 'enabled', 'private'] as const) {
      const changed = await t.ok('PUT', `/projects/${made.id}`, ROOT_TOKEN, { repository_access_level: level }, 200);
      assert.equal(changed.repository_access_level, level);
      assert.equal((await t.must('GET', `/projects/${made.id}`, ROOT_TOKEN)).repository_access_level, level);
    }
    // Lists answer it too.
    const listed = (await t.must('GET', '/projects?search=fields', ROOT_TOKEN)) as any[];
    assert.deepEqual(
      listed.map((p) => [p.id, p.repository_access_level]),
      [[made.id, 'private']],
    );
    // GitLab's values: disabled, private, enabled (lib/api/helpers/projects_helpers.rb); "public" is not one.
    const invalid = { error: 'repository_access_level does not have a valid value' };
    for (const value of ['public', 'yes', ''])
      await t.fails('PUT', `/projects/${made.id}`, ROOT_TOKEN, { repository_access_level: value }, 400, invalid);
    await t.fails('POST', '/projects', ROOT_TOKEN, { name: 'bad', repository_access_level: 'public' }, 400, invalid);
    assert.equal((await t.must('GET', `/projects/${made.id}`, ROOT_TOKEN)).repository_access_level, 'private');
    // Changing it is a project setting: maintainers and administrators (a developer gets 403).
    await t.fails(
      'PUT',
      `/projects/${anyProject.id}`,
      developer.token,
      { repository_access_level: 'enabled' },
      403,
      FORBIDDEN,
    );
  });

  it("the project entity has default_branch only for who may read the code, on one project and in every list (GitLab's BasicProjectDetails: read_code)", async () => {
    // The same viewers as members of a group holding a public and a private project: their access is inherited.
    const group = await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'code-group',
      path: 'code-group',
      visibility: 'public',
    });
    for (const viewer of viewers.filter((v) => v.role > 0))
      await t.must('POST', `/groups/${group.id}/members`, ROOT_TOKEN, {
        user_id: viewer.id,
        access_level: viewer.role,
      });
    const grouped: typeof projects = [];
    for (const visibility of ['public', 'private'] as const) {
      const p = await t.must('POST', '/projects', ROOT_TOKEN, {
        name: `${visibility}-grouped`,
        namespace_id: group.id,
        visibility,
      });
      grouped.push({ id: p.id, web_url: p.web_url, path: p.path_with_namespace, visibility });
    }
    const lists = [
      ['/projects?search=-code', projects],
      ['/users/root/projects?search=-code', projects],
      [`/groups/${group.id}/projects`, grouped],
      ['/projects?search=-grouped', grouped],
    ] as const;
    // Each pair of levels, the two projects of a list at different ones: the list decides for each row.
    for (const first of LEVELS) {
      for (const second of LEVELS) {
        const levelOf = (p: (typeof projects)[number]) => (p === projects[0] || p === grouped[0] ? first : second);
        for (const p of [...projects, ...grouped])
          await t.must('PUT', `/projects/${p.id}`, ROOT_TOKEN, { repository_access_level: levelOf(p) });
        for (const viewer of viewers) {
          const shows = (p: (typeof projects)[number]) => expected(viewer, p.visibility, levelOf(p)).code;
          for (const p of [...projects, ...grouped]) {
            const what = `${levelOf(p)} ${p.visibility} ${viewer.name} GET /projects/${p.id}`;
            const res = await t.api('GET', `/projects/${p.id}`, viewer.token);
            if (!expected(viewer, p.visibility, levelOf(p)).readProject) {
              assert.equal(res.statusCode, 404, what);
              continue;
            }
            assert.equal(res.statusCode, 200, what);
            assert.equal('default_branch' in res.json, shows(p), what);
            if (shows(p)) assert.equal(res.json.default_branch, 'main', what);
          }
          for (const [url, set] of lists) {
            const listed = (await t.must('GET', url, viewer.token)) as any[];
            const want = set.filter((p) => expected(viewer, p.visibility, levelOf(p)).readProject);
            const what = `${first}/${second} ${viewer.name} GET ${url}`;
            assert.deepEqual(listed.map((p) => p.id).sort(), want.map((p) => p.id).sort(), what);
            for (const p of want) {
              const row = listed.find((r) => r.id === p.id);
              assert.equal('default_branch' in row, shows(p), `${what}: ${p.visibility} ${levelOf(p)}`);
              if (shows(p)) assert.equal(row.default_branch, 'main', what);
            }
          }
        }
      }
    }
    for (const p of [...projects, ...grouped])
      await t.must('PUT', `/projects/${p.id}`, ROOT_TOKEN, { repository_access_level: 'enabled' });
  });

  it("the repository API: the branches and commits APIs answer 404 Repository where the feature is closed to the viewer, the others 403 (GitLab's require_repository_enabled! and download_code)", async () => {
    const reads: [kind: 'gated' | 'code', path: string][] = [
      ['gated', '/repository/branches'],
      ['gated', '/repository/branches/main'],
      ['gated', '/repository/commits'],
      ['gated', '/repository/commits/main'],
      ['gated', '/repository/commits/main/diff'],
      ['code', '/repository/files/README.md?ref=main'],
      ['code', '/repository/files/README.md/raw?ref=main'],
      ['code', '/repository/tree'],
      ['code', '/repository/tags'],
      ['code', '/repository/tags/v1'],
      ['code', '/repository/compare?from=main&to=main'],
      ['code', '/repository/contributors'],
      ['code', '/repository/archive.tar.gz'],
      ['code', '/repository/merge_base?refs[]=main&refs[]=v1'],
    ];
    for (const level of LEVELS) {
      for (const project of projects) {
        await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: level });
        for (const viewer of viewers) {
          const want = expected(viewer, project.visibility, level);
          for (const [kind, path] of reads) {
            const url = `/projects/${project.id}${path}`;
            const what = `${level} ${project.visibility} ${viewer.name} GET ${path}`;
            if (!want.readProject) await t.fails('GET', url, viewer.token, undefined, 404, NO_PROJECT);
            else if (kind === 'gated' && !want.feature)
              await t.fails('GET', url, viewer.token, undefined, 404, NO_REPOSITORY);
            else if (!want.code) await t.fails('GET', url, viewer.token, undefined, 403, FORBIDDEN);
            else {
              const res = await t.api('GET', url, viewer.token);
              assert.equal(res.statusCode, 200, `${what}: ${res.body.slice(0, 200)}`);
            }
          }
          // HEAD of a branch: the same status, no body.
          const head = await t.api('HEAD', `/projects/${project.id}/repository/branches/main`, viewer.token);
          const status = !want.readProject ? 404 : !want.feature ? 404 : !want.code ? 403 : 204;
          assert.equal(head.statusCode, status, `${level} ${project.visibility} ${viewer.name} HEAD branch`);
        }
      }
    }
  });

  it('writes: nobody writes a disabled repository, not even an administrator; a private one keeps its developers', async () => {
    const project = projects[0];
    const writes = (n: string) =>
      [
        ['POST', `/repository/files/${n}.txt`, { branch: 'main', content: n, commit_message: n }, 'code'],
        ['POST', '/repository/branches', { branch: `b-${n}`, ref: 'main' }, 'gated'],
        ['POST', '/repository/tags', { tag_name: `t-${n}`, ref: 'main' }, 'code'],
        [
          'POST',
          '/repository/commits',
          {
            branch: 'main',
            commit_message: n,
            actions: [{ action: 'create', file_path: `c-${n}.txt`, content: n }],
          },
          'gated',
        ],
      ] as const;
    const admin = viewers.find((v) => v.admin)!;
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'disabled' });
    for (const viewer of [developer, admin]) {
      for (const [method, path, body, kind] of writes(viewer.name)) {
        const url = `/projects/${project.id}${path}`;
        if (kind === 'gated') await t.fails(method, url, viewer.token, body, 404, NO_REPOSITORY);
        else await t.fails(method, url, viewer.token, body, 403, FORBIDDEN);
      }
      await t.fails(
        'DELETE',
        `/projects/${project.id}/repository/branches/nothing`,
        viewer.token,
        undefined,
        404,
        NO_REPOSITORY,
      );
      await t.fails('DELETE', `/projects/${project.id}/repository/tags/v1`, viewer.token, undefined, 403, FORBIDDEN);
    }
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'private' });
    for (const [method, path, body] of writes('dev')) {
      const res = await t.api(method, `/projects/${project.id}${path}`, developer.token, body);
      assert.equal(res.statusCode, 201, `${method} ${path}: ${res.body}`);
    }
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'enabled' });
  });

  it('an answer read before the level changed is not served after it', async () => {
    const project = projects[0];
    const url = `/projects/${project.id}/repository/files/README.md/raw?ref=main`;
    for (let i = 0; i < 3; i++) assert.equal((await t.api('GET', url, null)).statusCode, 200);
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'private' });
    await t.fails('GET', url, null, undefined, 403, FORBIDDEN);
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'enabled' });
    assert.equal((await t.api('GET', url, null)).statusCode, 200);
  });

  it("git over HTTP: who may not read the code is challenged (anonymous) or refused with GitLab's sentence; pushes need the feature too", async () => {
    for (const level of LEVELS) {
      for (const project of projects) {
        await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: level });
        for (const viewer of viewers) {
          const want = expected(viewer, project.visibility, level);
          const headers: Record<string, string> = viewer.token
            ? { authorization: `Basic ${Buffer.from(`oauth2:${viewer.token}`).toString('base64')}` }
            : {};
          const what = `${level} ${project.visibility} ${viewer.name}`;
          const refs = await t.request({
            method: 'GET',
            url: `/${project.path}.git/info/refs?service=git-upload-pack`,
            token: null,
            headers,
          });
          if (want.code) assert.equal(refs.statusCode, 200, `${what}: ${refs.body}`);
          else if (!viewer.token) {
            assert.equal(refs.statusCode, 401, what);
            assert.match(String(refs.headers['www-authenticate']), /^Basic/, what);
          } else if (!want.readProject) assert.equal(refs.statusCode, 404, what);
          else {
            assert.equal(refs.statusCode, 403, what);
            assert.equal(refs.body, DOWNLOAD_DENIED, what);
          }
          if (viewer !== developer) continue;
          const push = await t.request({
            method: 'GET',
            url: `/${project.path}.git/info/refs?service=git-receive-pack`,
            token: null,
            headers,
          });
          if (level === 'disabled') {
            assert.equal(push.statusCode, 403, what);
            assert.equal(push.body, PUSH_DENIED, what);
          } else assert.equal(push.statusCode, 200, what);
        }
      }
    }
  });

  it('the pages: the project page leaves out the clone URL and files, and the code pages are hidden', async () => {
    for (const level of LEVELS) {
      for (const project of projects) {
        await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: level });
        const web = pathOf(project.web_url);
        for (const viewer of viewers) {
          const want = expected(viewer, project.visibility, level);
          const what = `${level} ${project.visibility} ${viewer.name}`;
          const page = (url: string) =>
            t.request({ method: 'GET', url, token: null, headers: viewer.cookie ? { cookie: viewer.cookie } : {} });
          const home = await page(web);
          if (want.readProject) {
            assert.equal(home.statusCode, 200, what);
            assert.equal(home.body.includes('Clone with HTTPS'), want.code, `${what}: clone URL`);
            assert.equal(home.body.includes('README.md'), want.code, `${what}: files`);
          }
          for (const url of [`${web}/-/tree/main`, `${web}/-/blob/main/README.md`, `${web}/-/raw/main/README.md`]) {
            const res = await page(url);
            if (want.code) assert.equal(res.statusCode, 200, `${what} ${url}`);
            else if (viewer.cookie) assert.equal(res.statusCode, 404, `${what} ${url}`);
            else assert.equal(res.statusCode, 302, `${what} ${url}`);
          }
        }
      }
    }
  });

  it('a real git clone of a repository for members only: refused to a non-member, taken by a guest; pushes refused when disabled', async () => {
    const project = projects[0];
    const url = (viewer: Viewer) => `http://oauth2:${viewer.token}@${host}/${project.path}.git`;
    const outsider = viewers.find((v) => v.name === 'outsider')!;
    const guest = viewers.find((v) => v.name === 'guest')!;
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'private' });
    const refused = await runGit(['clone', url(outsider), path.join(work, 'outsider')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /You are not allowed to download code from this project\./);
    assert.ok(!fs.existsSync(path.join(work, 'outsider', 'README.md')));
    const anonymous = await runGit(['clone', `http://${host}/${project.path}.git`, path.join(work, 'anonymous')]);
    assert.notEqual(anonymous.code, 0);
    assert.match(anonymous.stderr, /could not read Username|terminal prompts disabled|Authentication failed/);
    const cloned = await runGit(['clone', url(guest), path.join(work, 'guest')]);
    assert.equal(cloned.code, 0, cloned.stderr);
    assert.ok(fs.existsSync(path.join(work, 'guest', 'README.md')));

    const dir = path.join(work, 'developer');
    assert.equal((await runGit(['clone', url(developer), dir])).code, 0);
    fs.writeFileSync(path.join(dir, 'pushed.txt'), 'x');
    assert.equal((await runGit(['add', 'pushed.txt'], dir)).code, 0);
    assert.equal((await runGit(['commit', '-m', 'pushed'], dir)).code, 0);
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'disabled' });
    const push = await runGit(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /You are not allowed to push code to this project\./);
    const fetched = await runGit(['fetch', 'origin'], dir);
    assert.notEqual(fetched.code, 0);
    assert.match(fetched.stderr, /You are not allowed to download code from this project\./);
    await t.must('PUT', `/projects/${project.id}`, ROOT_TOKEN, { repository_access_level: 'enabled' });
    await t.fails('GET', `/projects/${project.id}/repository/files/pushed.txt?ref=main`, ROOT_TOKEN, undefined, 404, {
      message: '404 File Not Found',
    });
  });
});

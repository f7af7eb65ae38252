// Custom template sources (docs/gitlab-compatibility.md#d9 and #custom-templates) through real commits to template
// projects: group template projects at two levels and the instance one, list order, closest-first lookup,
// source_template_project_id, custom licenses, freshness and unreadable sources; then the deprecated instance-wide
// /templates/<type> endpoints (docs/gitlab-compatibility.md#deprecated-template-endpoints).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const HEADER = '# This file is a template, and might need editing before it works on your project.\n';
const YEAR = String(new Date().getUTCFullYear());
const NO_TEMPLATE = { message: '404 Template Not Found' };
const LICENSE_KEYS = [
  'key',
  'name',
  'nickname',
  'html_url',
  'source_url',
  'popular',
  'description',
  'conditions',
  'permissions',
  'limitations',
  'content',
];
const TYPES = ['dockerfiles', 'gitignores', 'gitlab_ci_ymls', 'licenses', 'issues', 'merge_requests'] as const;
const LAYOUT: Record<string, [dir: string, ext: string]> = {
  dockerfiles: ['Dockerfile', '.dockerfile'],
  gitignores: ['gitignore', '.gitignore'],
  gitlab_ci_ymls: ['gitlab-ci', '.yml'],
  licenses: ['LICENSE', '.txt'],
  issues: ['.gitlab/issue_templates', '.md'],
  merge_requests: ['.gitlab/merge_request_templates', '.md'],
};
const prefixed = (type: string, text: string) =>
  type === 'dockerfiles' || type === 'gitlab_ci_ymls' ? HEADER + text : text;
const keys = (...names: string[]) => names.map((n) => ({ key: n, name: n }));
const LICENSE_TEXT =
  'Copyright {YEAR} <FullName>\n[Project] - [description]\n{yyyy] [name of copyright owner] <name of author>\n' +
  "<one line to give the program's name and a brief idea of what it does.>\n";

const require = createRequire(import.meta.url);
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const RAW = Object.values(require('@rexxars/choosealicense-list/licenses.json') as Record<string, any>)
  .map((l) => ({ ...l, key: String(l.id).toLowerCase() }))
  .sort((a, b) => byteOrder(a.key, b.key));
const licenseObject = (l: any, content: string) => ({
  key: l.key,
  name: l.title,
  nickname: l.nickname ?? null,
  html_url: `http://choosealicense.com/licenses/${l.key}/`,
  source_url: `https://spdx.org/licenses/${l['spdx-id']}.html`,
  popular: l.featured === true,
  description: l.description,
  conditions: l.conditions,
  permissions: l.permissions,
  limitations: l.limitations,
  content,
});
const licenseText = (l: any) => String(l.body).replace(/^([ \t]*\n)+/, '');
const DATA = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'templates-data');
const GITIGNORE = path.join(path.dirname(require.resolve('gitignr/package.json')), 'gitignore');
const text = (file: string) => fs.readFileSync(file, 'utf8').replace(/\r\n/g, '\n');

type U = Awaited<ReturnType<TestApp['user']>>;
/** The GETs of template URLs that these tests make, on the helper's ok() and fails(). */
function harness(getT: () => TestApp) {
  const ok = (url: string, token: string | null) => getT().ok('GET', url, token, undefined, 200);
  const fails = (url: string, token: string | null, status: number, body: object) =>
    getT().fails('GET', url, token, undefined, status, body);
  return { ok, fails };
}

describe('custom template sources (docs/gitlab-compatibility.md#d9)', () => {
  let t: TestApp;
  const { ok, fails } = harness(() => t);
  let alice: U, bob: U;
  let top: any, sub: any, locked: any;
  let topTpl: number,
    subTpl: number,
    inst: number,
    secretTpl: number,
    app: number,
    topApp: number,
    personal: number,
    open: number;
  const builtin: Record<string, { key: string; name: string }[]> = {};

  const project = async (token: string, payload: object) =>
    (await t.ok('POST', '/projects', token, payload, 201)).id as number;
  const commit = (id: number, file: string, content: string, token = alice.token, method = 'POST') =>
    t.ok(
      method,
      `/projects/${id}/repository/files/${encodeURIComponent(file)}`,
      token,
      { branch: 'main', content, commit_message: `write ${file}` },
      method === 'POST' ? 201 : 200,
    );
  const all = async (id: number, type: string, token: string | null = alice.token) => {
    const items: any[] = [];
    for (let page = 1; ; page++) {
      const json = await ok(`/projects/${id}/templates/${type}?per_page=100&page=${page}`, token);
      items.push(...json);
      if (json.length < 100) return items;
    }
  };
  /** One source's templates: Shared and <Own> of every type, each text naming its source. */
  const fill = async (id: number, own: string, tag: string, token = alice.token) => {
    for (const type of TYPES) {
      const [dir, ext] = LAYOUT[type];
      await commit(
        id,
        `${dir}/Shared${ext}`,
        type === 'licenses' && tag === 'sub' ? LICENSE_TEXT : `${type} Shared from ${tag}\n`,
        token,
      );
      await commit(id, `${dir}/${own}${ext}`, `${type} ${own} from ${tag}\n`, token);
    }
  };

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    [alice, bob] = [await t.user('alice'), await t.user('bob')];
    top = await t.ok('POST', '/groups', alice.token, { name: 'Top', path: 'top', visibility: 'public' }, 201);
    sub = await t.ok(
      'POST',
      '/groups',
      alice.token,
      { name: 'Sub', path: 'sub', parent_id: top.id, visibility: 'public' },
      201,
    );
    locked = await t.ok('POST', '/groups', alice.token, { name: 'Locked', path: 'locked', visibility: 'public' }, 201);
    topTpl = await project(alice.token, { path: 'top-templates', namespace_id: top.id, visibility: 'public' });
    subTpl = await project(alice.token, { path: 'sub-templates', namespace_id: sub.id, visibility: 'public' });
    secretTpl = await project(alice.token, {
      path: 'secret-templates',
      namespace_id: locked.id,
      visibility: 'private',
    });
    app = await project(alice.token, { path: 'app', namespace_id: sub.id, visibility: 'public' });
    topApp = await project(alice.token, { path: 'top-app', namespace_id: top.id, visibility: 'public' });
    open = await project(alice.token, { path: 'open', namespace_id: locked.id, visibility: 'public' });
    personal = await project(bob.token, { path: 'mine', visibility: 'public' });
    inst = await project(ROOT_TOKEN, { path: 'instance-templates', visibility: 'public' });
    for (const id of [app, topApp, personal]) {
      const token = id === personal ? bob.token : alice.token;
      await commit(id, '.gitlab/issue_templates/Own.md', 'own issue\n', token);
      await commit(id, '.gitlab/merge_request_templates/Own.md', 'own mr\n', token);
    }
    for (const type of TYPES) builtin[type] = await all(app, type);
    await fill(subTpl, 'SubOnly', 'sub');
    await fill(topTpl, 'TopOnly', 'top');
    await commit(topTpl, 'gitignore/Ruby.gitignore', 'custom ruby\n');
    await fill(inst, 'InstOnly', 'instance', ROOT_TOKEN);
    await commit(secretTpl, 'Dockerfile/Secret.dockerfile', 'FROM secret\n');
    await t.ok('PUT', `/groups/${top.id}`, alice.token, { file_template_project_id: topTpl }, 200);
    await t.ok('PUT', `/groups/${sub.id}`, alice.token, { file_template_project_id: subTpl }, 200);
    await t.ok('PUT', `/groups/${locked.id}`, alice.token, { file_template_project_id: secretTpl }, 200);
    await t.ok('PUT', '/application/settings', ROOT_TOKEN, { file_template_project_id: inst }, 200);
  });
  after(() => t.close());

  it('the built-in lists before any template project is configured', () => {
    assert.equal(builtin.licenses.length, RAW.length);
    assert.deepEqual(builtin.issues, keys('Own'));
    assert.deepEqual(builtin.merge_requests, keys('Own'));
  });

  it('lists: closest group first, then the parent group, then the instance, then built-in', async () => {
    for (const type of TYPES) {
      const topNames = type === 'gitignores' ? ['Ruby', 'Shared', 'TopOnly'] : ['Shared', 'TopOnly'];
      const instance = keys('InstOnly', 'Shared');
      assert.deepEqual(
        await all(app, type),
        [...keys('Shared', 'SubOnly'), ...keys(...topNames), ...instance, ...builtin[type]],
        `${type} in top/sub`,
      );
      assert.deepEqual(
        await all(topApp, type),
        [...keys(...topNames), ...instance, ...builtin[type]],
        `${type} in top`,
      );
      assert.deepEqual(
        await all(personal, type, bob.token),
        [...instance, ...builtin[type]],
        `${type} in a personal namespace`,
      );
    }
  });

  it('a template project named by a group and by its parent too is listed once', async () => {
    await t.ok('PUT', `/groups/${sub.id}`, alice.token, { file_template_project_id: topTpl }, 200);
    try {
      for (const type of TYPES) {
        const topNames = type === 'gitignores' ? ['Ruby', 'Shared', 'TopOnly'] : ['Shared', 'TopOnly'];
        assert.deepEqual(
          await all(app, type),
          [...keys(...topNames), ...keys('InstOnly', 'Shared'), ...builtin[type]],
          type,
        );
      }
    } finally {
      await t.ok('PUT', `/groups/${sub.id}`, alice.token, { file_template_project_id: subTpl }, 200);
    }
  });

  it('a same-named template is resolved closest first', async () => {
    for (const type of TYPES.filter((x) => x !== 'licenses')) {
      const expect = (tag: string) => ({ name: 'Shared', content: prefixed(type, `${type} Shared from ${tag}\n`) });
      assert.deepEqual(await ok(`/projects/${app}/templates/${type}/Shared`, alice.token), expect('sub'), type);
      assert.deepEqual(await ok(`/projects/${topApp}/templates/${type}/Shared`, alice.token), expect('top'), type);
      assert.deepEqual(await ok(`/projects/${personal}/templates/${type}/Shared`, bob.token), expect('instance'), type);
      assert.deepEqual(await ok(`/projects/${app}/templates/${type}/InstOnly`, alice.token), {
        name: 'InstOnly',
        content: prefixed(type, `${type} InstOnly from instance\n`),
      });
      await fails(`/projects/${personal}/templates/${type}/TopOnly`, bob.token, 404, NO_TEMPLATE);
    }
    assert.deepEqual(await ok(`/projects/${app}/templates/gitignores/Ruby`, alice.token), {
      name: 'Ruby',
      content: 'custom ruby\n',
    });
    assert.deepEqual(await ok(`/projects/${app}/templates/issues/Own`, alice.token), {
      name: 'Own',
      content: 'own issue\n',
    });
  });

  it('a template file over 1 MB is neither listed nor served (404)', async () => {
    // 49 MB of control characters, each six in JSON, answered 308 MB anonymously (helper-63).
    const huge = '\u0001'.repeat(1024 * 1024 + 1);
    await commit(personal, '.gitlab/issue_templates/Huge.md', huge, bob.token);
    await commit(personal, '.gitlab/issue_templates/Most.md', huge.slice(1), bob.token);
    const listed = (await all(personal, 'issues', null)).map((template: { key: string }) => template.key);
    assert.ok(listed.includes('Most') && !listed.includes('Huge'), listed.join());
    await fails(`/projects/${personal}/templates/issues/Huge`, null, 404, NO_TEMPLATE);
    assert.equal((await ok(`/projects/${personal}/templates/issues/Most`, null)).content, huge.slice(1));
  });

  it("source_template_project_id selects that source's copy, else the built-in one", async () => {
    const q = (name: string, id: number) =>
      `/projects/${app}/templates/dockerfiles/${name}?source_template_project_id=${id}`;
    assert.equal((await ok(q('Shared', topTpl), alice.token)).content, `${HEADER}dockerfiles Shared from top\n`);
    assert.equal((await ok(q('Shared', inst), alice.token)).content, `${HEADER}dockerfiles Shared from instance\n`);
    assert.equal((await ok(q('Shared', subTpl), alice.token)).content, `${HEADER}dockerfiles Shared from sub\n`);
    await fails(q('TopOnly', subTpl), alice.token, 404, NO_TEMPLATE);
    const ruby = text(path.join(GITIGNORE, 'Ruby.gitignore'));
    assert.deepEqual(
      await ok(`/projects/${app}/templates/gitignores/Ruby?source_template_project_id=${subTpl}`, alice.token),
      { name: 'Ruby', content: ruby },
    );
    assert.equal(
      (await ok(`/projects/${app}/templates/licenses/Shared?source_template_project_id=${inst}`, alice.token)).content,
      'licenses Shared from instance\n',
    );
  });

  it('a custom license: name = nickname = file name, no metadata, placeholders filled', async () => {
    const lic = (content: string) => ({
      key: 'Shared',
      name: 'Shared',
      nickname: 'Shared',
      html_url: null,
      source_url: null,
      popular: false,
      description: null,
      conditions: null,
      permissions: null,
      limitations: null,
      content,
    });
    const res = await ok(`/projects/${app}/templates/licenses/Shared?project=Widget`, alice.token);
    assert.deepEqual(Object.keys(res), LICENSE_KEYS);
    assert.deepEqual(res, lic(`Copyright ${YEAR} ALICE\nWidget - Widget\n${YEAR} ALICE ALICE\nWidget\n`));
    assert.deepEqual(
      await ok(`/projects/${app}/templates/licenses/Shared?fullname=Jane`, null),
      lic(
        `Copyright ${YEAR} Jane\n[Project] - [description]\n${YEAR} Jane Jane\n<one line to give the program's name and a brief idea of what it does.>\n`,
      ),
    );
    assert.deepEqual(
      await ok(`/projects/${app}/templates/licenses/Shared`, null),
      lic(LICENSE_TEXT.replace('{YEAR}', YEAR).replace('{yyyy]', YEAR)),
    );
  });

  it('a license whose line repeats "[one line " is answered at once, as it is', async () => {
    // Its placeholder's middle unbounded, each "[" tried the rest of the line: time in the square of its length.
    const content = `${'[one line '.repeat(40_000)}\n`;
    await commit(inst, 'LICENSE/repeats.txt', content, ROOT_TOKEN);
    const started = performance.now();
    const res = await ok(`/projects/${app}/templates/licenses/repeats?project=P`, null);
    assert.equal(res.content, content);
    // Linear: about a millisecond. Before, tens of seconds.
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  });

  it('a license that filling in would make more than 16 MB larger is refused with 400, before it is made', async () => {
    const content = `${'[fullname] '.repeat(90_000)}\n`; // under the 1 MB a template may be
    await commit(inst, 'LICENSE/many.txt', content, ROOT_TOKEN);
    const url = `/projects/${app}/templates/licenses/many`;
    const refused = { message: '400 Bad request - filled in, the license would grow by more than 16 MB' };
    // 90,000 × (200 - 10) characters more: 17 MB.
    await fails(`${url}?fullname=${'n'.repeat(200)}`, null, 400, refused);
    // 90,000 × (100 - 10): 8 MB, filled in.
    const res = await ok(`${url}?fullname=${'n'.repeat(100)}`, null);
    assert.equal(res.content, `${`${'n'.repeat(100)} `.repeat(90_000)}\n`);
    // The full name filled into the project's value first: 2,000 × 9,000 characters, 18 MB.
    const project = `${'[fullname]'.repeat(2_000)}`;
    await fails(
      `/projects/${app}/templates/licenses/Shared?project=${project}&fullname=${'n'.repeat(9_000)}`,
      null,
      400,
      refused,
    );
  });

  it('a new commit to a template project is visible on the very next request', async () => {
    await commit(subTpl, 'Dockerfile/Shared.dockerfile', 'FROM changed\n', alice.token, 'PUT');
    assert.deepEqual(await ok(`/projects/${app}/templates/dockerfiles/Shared`, alice.token), {
      name: 'Shared',
      content: `${HEADER}FROM changed\n`,
    });
    await commit(topTpl, 'gitignore/Fresh.gitignore', 'fresh\n');
    assert.deepEqual(
      (await all(app, 'gitignores')).slice(0, 6),
      keys('Shared', 'SubOnly', 'Fresh', 'Ruby', 'Shared', 'TopOnly'),
    );
    assert.deepEqual(await ok(`/projects/${topApp}/templates/gitignores/Fresh`, alice.token), {
      name: 'Fresh',
      content: 'fresh\n',
    });
  });

  it('a built-in answer given while a template project applies is not kept: a same-named file committed there wins next', async () => {
    // Commits to a repository that has its branch change no database row: only git says something changed.
    const goText = text(path.join(GITIGNORE, 'Go.gitignore'));
    assert.deepEqual(await ok(`/projects/${app}/templates/gitignores/Go`, alice.token), {
      name: 'Go',
      content: goText,
    });
    await commit(subTpl, 'gitignore/Go.gitignore', 'custom go\n');
    assert.deepEqual(await ok(`/projects/${app}/templates/gitignores/Go`, alice.token), {
      name: 'Go',
      content: 'custom go\n',
    });

    assert.deepEqual(await ok('/templates/gitignores/Go', null), { name: 'Go', content: goText });
    await commit(inst, 'gitignore/Go.gitignore', 'instance go\n', ROOT_TOKEN);
    assert.deepEqual(await ok('/templates/gitignores/Go', null), { name: 'Go', content: 'instance go\n' });

    assert.equal((await ok('/templates/licenses/mit', null)).name, 'MIT License');
    await commit(inst, 'LICENSE/mit.txt', 'instance mit [year]\n', ROOT_TOKEN);
    const custom = await ok('/templates/licenses/mit', null);
    assert.deepEqual([custom.name, custom.content], ['mit', `instance mit ${YEAR}\n`]);
  });

  it('a template project the caller cannot read is never used', async () => {
    const instance = keys('InstOnly', 'Shared');
    for (const token of [bob.token, null]) {
      assert.deepEqual(await all(open, 'dockerfiles', token), [...instance, ...builtin.dockerfiles]);
      await fails(`/projects/${open}/templates/dockerfiles/Secret`, token, 404, NO_TEMPLATE);
      await fails(
        `/projects/${open}/templates/dockerfiles/Secret?source_template_project_id=${secretTpl}`,
        token,
        404,
        NO_TEMPLATE,
      );
    }
    assert.deepEqual((await all(open, 'dockerfiles')).slice(0, 3), keys('Secret', 'InstOnly', 'Shared'));
    assert.deepEqual(await ok(`/projects/${open}/templates/dockerfiles/Secret`, alice.token), {
      name: 'Secret',
      content: `${HEADER}FROM secret\n`,
    });
  });

  it("the deprecated endpoints include the instance template project, not the groups'", async () => {
    const list = await ok('/templates/dockerfiles?per_page=100', null);
    assert.deepEqual(list, [...keys('InstOnly', 'Shared'), ...builtin.dockerfiles]);
    assert.deepEqual(await ok('/templates/gitignores/InstOnly', null), {
      name: 'InstOnly',
      content: 'gitignores InstOnly from instance\n',
    });
    await fails('/templates/dockerfiles/SubOnly', null, 404, { message: '404 dockerfile Not Found' });
  });
});

describe('deprecated instance-wide template endpoints (docs/gitlab-compatibility.md#deprecated-template-endpoints)', () => {
  let t: TestApp;
  const { ok, fails } = harness(() => t);
  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
  });
  after(() => t.close());

  it('/templates/licenses: full objects sorted by key, placeholders not filled, paginated', async () => {
    const expected = RAW.map((l) => licenseObject(l, licenseText(l)));
    const firstPage = await t.api('GET', '/templates/licenses', null);
    assert.equal(firstPage.statusCode, 200);
    assert.deepEqual([firstPage.headers['x-total'], firstPage.headers['x-per-page']], [String(RAW.length), '20']);
    assert.deepEqual(firstPage.json, expected.slice(0, 20));
    for (const l of firstPage.json) assert.deepEqual(Object.keys(l), LICENSE_KEYS);
    assert.deepEqual(await ok('/templates/licenses?per_page=100', null), expected);
  });

  it('popular=true / false filter; popular=maybe is 400', async () => {
    assert.deepEqual(
      (await ok('/templates/licenses?popular=true', null)).map((l: any) => l.key),
      ['apache-2.0', 'gpl-3.0', 'mit'],
    );
    const rest = await ok('/templates/licenses?popular=false&per_page=100', null);
    assert.deepEqual(
      rest.map((l: any) => l.key),
      RAW.filter((l) => !l.featured).map((l) => l.key),
    );
    assert.ok(rest.every((l: any) => l.popular === false));
    await fails('/templates/licenses?popular=maybe', null, 400, { error: 'popular is invalid' });
  });

  it('/templates/licenses/:name fills the placeholders; unknown is 404 License Not Found', async () => {
    const mit = RAW.find((l) => l.key === 'mit');
    const body = licenseText(mit).replace('[year]', YEAR);
    assert.deepEqual(
      await ok('/templates/licenses/mit?fullname=Jane%20Doe&project=P', null),
      licenseObject(mit, body.replace('[fullname]', 'Jane Doe')),
    );
    assert.deepEqual(
      await ok('/templates/licenses/mit', ROOT_TOKEN),
      licenseObject(mit, body.replace('[fullname]', 'Administrator')),
    );
    assert.deepEqual(await ok('/templates/licenses/mit', null), licenseObject(mit, body));
    for (const name of ['MIT', 'nope'])
      await fails(`/templates/licenses/${name}`, null, 404, { message: '404 License Not Found' });
    await fails('/templates/licenses/mi(t)', null, 404, { error: '404 Not Found' });
  });

  it('/templates/<type> lists and single templates; unknown names; C++ does not route', async () => {
    const names = (dir: string) =>
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.gitignore'))
        .map((f) => f.slice(0, -10))
        .sort(byteOrder);
    const gitignores = [...names(GITIGNORE), ...names(path.join(GITIGNORE, 'Global'))];
    const listed = [
      ...(await ok('/templates/gitignores?per_page=100', null)),
      ...(await ok('/templates/gitignores?per_page=100&page=2', null)),
      ...(await ok('/templates/gitignores?per_page=100&page=3', null)),
    ];
    assert.deepEqual(listed, keys(...gitignores));
    assert.deepEqual((await ok('/templates/dockerfiles', null)).slice(0, 1), keys('Binary'));
    assert.deepEqual((await ok('/templates/gitlab_ci_ymls', null)).slice(0, 1), keys('Android'));
    assert.deepEqual(await ok('/templates/gitignores/Ruby', null), {
      name: 'Ruby',
      content: text(path.join(GITIGNORE, 'Ruby.gitignore')),
    });
    assert.deepEqual(await ok('/templates/dockerfiles/Binary', null), {
      name: 'Binary',
      content: HEADER + text(path.join(DATA, 'dockerfiles', 'Binary.Dockerfile')),
    });
    assert.deepEqual(await ok('/templates/gitlab_ci_ymls/Ruby', null), {
      name: 'Ruby',
      content: HEADER + text(path.join(DATA, 'gitlab-ci', 'Ruby.gitlab-ci.yml')),
    });
    await fails('/templates/gitignores/Nope', null, 404, { message: '404 gitignore Not Found' });
    await fails('/templates/gitlab_ci_ymls/Nope', null, 404, { message: '404 gitlab_ci_yml Not Found' });
    await fails('/templates/dockerfiles/Nope', null, 404, { message: '404 dockerfile Not Found' });
    for (const name of ['C++', 'C%2B%2B', 'Ruby(old)'])
      await fails(`/templates/gitignores/${name}`, null, 404, { error: '404 Not Found' });
  });
});

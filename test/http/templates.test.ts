// Project templates (docs/gitlab-compatibility.md#templates, #order-of-checks, decisions #d6, #d15, #d16; issue 5):
// types and :name routing, lists in GitLab's category order with pagination, every built-in template fetched once,
// licenses and their placeholders, issue/MR templates from the repository, and the permission checks
// (#template-permissions).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createTestApp, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const HEADER = '# This file is a template, and might need editing before it works on your project.\n';
const YEAR = String(new Date().getUTCFullYear());
const BAD_TYPE = { error: 'type does not have a valid value' };
const NO_ROUTE = { error: '404 Not Found' };
const NO_TEMPLATE = { message: '404 Template Not Found' };
const NO_PROJECT = { message: '404 Project Not Found' };
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
const FILE_TYPES = ['dockerfiles', 'gitignores', 'gitlab_ci_ymls'] as const;
const denied = (type: string) => ({
  message: `403 Forbidden - Your current role does not have the required permissions to access the ${type} template. Contact your project administrator for assistance.`,
});

// ---- expected data, read from the sources the issue names ----
const require = createRequire(import.meta.url);
const DATA = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'templates-data');
const GITIGNORE = path.join(path.dirname(require.resolve('gitignr/package.json')), 'gitignore');
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
/** One category: files directly in `dir` ending in `ext`, by byte order, with their text. */
function category(dir: string, ext: string, hide: (n: string) => boolean = () => false) {
  return (
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(ext))
      .map((e) => e.name.slice(0, -ext.length))
      .filter((n) => !hide(n))
      .sort(byteOrder)
      // gitignr packed github/gitignore with CRLF line ends; GitLab serves the upstream (LF) text.
      .map((n) => ({ key: n, text: fs.readFileSync(path.join(dir, n + ext), 'utf8').replace(/\r\n/g, '\n') }))
  );
}
const ciHidden = (n: string) => n.includes('.latest') || n.startsWith('Browser-Performance');
const EXPECTED = {
  dockerfiles: category(path.join(DATA, 'dockerfiles'), '.Dockerfile'),
  gitignores: [...category(GITIGNORE, '.gitignore'), ...category(path.join(GITIGNORE, 'Global'), '.gitignore')],
  gitlab_ci_ymls: ['', 'Pages', 'Verify', 'autodeploy'].flatMap((d) =>
    category(path.join(DATA, 'gitlab-ci', d), '.gitlab-ci.yml', ciHidden),
  ),
};
const RAW_LICENSES = Object.values(require('@rexxars/choosealicense-list/licenses.json') as Record<string, any>);
const LICENSES = [...RAW_LICENSES.filter((l) => !l.featured), ...RAW_LICENSES.filter((l) => l.featured)]
  .map((l) => ({ ...l, key: String(l.id).toLowerCase() }))
  .sort((a, b) => Number(a.featured) - Number(b.featured) || byteOrder(a.key, b.key));
const licenseData = (key: string) => LICENSES.find((l) => l.key === key)!;

/**
 * docs/gitlab-compatibility.md#license-placeholders, written independently of the server: any bracket style on
 * either side, case-insensitive.
 */
function fill(text: string, v: { fullname?: string; project?: string }) {
  const o = '[\\[<{]',
    c = '[\\]>}]';
  let out = text.replace(new RegExp(`${o}(year|yyyy)${c}`, 'gi'), YEAR);
  // GitLab's order (LicenseTemplate#resolve!): year, then project, then full name, each over the whole text.
  if (v.project)
    out = out.replace(
      new RegExp(`${o}(project|description|one line [^\\n]*? what it does\\.)${c}`, 'gi'),
      () => v.project!,
    );
  if (v.fullname)
    out = out.replace(new RegExp(`${o}(fullname|name of author|name of copyright owner)${c}`, 'gi'), () => v.fullname!);
  return out;
}
const licenseText = (key: string) => String(licenseData(key).body).replace(/^([ \t]*\n)+/, '');
function expectedLicense(key: string, v: { fullname?: string; project?: string } = {}) {
  const l = licenseData(key);
  return {
    key,
    name: l.title,
    nickname: l.nickname ?? null,
    html_url: `http://choosealicense.com/licenses/${key}/`,
    source_url: `https://spdx.org/licenses/${l['spdx-id']}.html`,
    popular: l.featured === true,
    description: l.description,
    conditions: l.conditions,
    permissions: l.permissions,
    limitations: l.limitations,
    content: fill(licenseText(key), v),
  };
}

describe('project templates', () => {
  let t: TestApp;
  type U = Awaited<ReturnType<TestApp['user']>>;
  let alice: U, guest: U, reporter: U, stranger: U;
  let PRIV: number, PUB: number, EMPTY: number;

  /** GET <url> answering 200 as application/json (docs/gitlab-compatibility.md#d11); the whole response. */
  const ok = async (url: string, token: string | null = alice.token) => {
    const res = await t.expect('GET', url, token, undefined, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    return res;
  };
  const fails = (url: string, token: string | null, status: number, body: object) =>
    t.fails('GET', url, token, undefined, status, body);
  const project = async (payload: object) => (await t.ok('POST', '/projects', alice.token, payload, 201)).id as number;
  const commit = (id: number, file: string, content: string, branch = 'main', extra: object = {}) =>
    t.expect(
      'POST',
      `/projects/${id}/repository/files/${encodeURIComponent(file)}`,
      alice.token,
      { branch, content, commit_message: `add ${file}`, ...extra },
      201,
    );
  /** Every page of a list (per_page as given), checking X-Total on each. */
  const all = async (id: number, type: string, perPage: number, token: string | null = alice.token) => {
    const items: any[] = [];
    for (let page = 1; ; page++) {
      const res = await ok(`/projects/${id}/templates/${type}?per_page=${perPage}&page=${page}`, token);
      items.push(...res.json);
      if (res.headers['x-next-page'] === '') return { items, total: res.headers['x-total'] };
    }
  };

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    [alice, guest, reporter, stranger] = [
      await t.user('alice'),
      await t.user('guest'),
      await t.user('reporter'),
      await t.user('stranger'),
    ];
    PRIV = await project({ path: 'priv', visibility: 'private' });
    PUB = await project({ path: 'pub', visibility: 'public' });
    EMPTY = await project({ path: 'empty', visibility: 'public' });
    for (const [u, level] of [
      [guest, 10],
      [reporter, 20],
    ] as const) {
      const res = await t.request({
        method: 'POST',
        url: `/api/v4/projects/${PRIV}/members`,
        token: alice.token,
        payload: { user_id: u.id, access_level: level },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const files: [string, string][] = [
      ['.gitlab/issue_templates/Bug.md', '## Bug\n\nSteps:\n'],
      ['.gitlab/issue_templates/a.md', 'lower\n'],
      ['.gitlab/issue_templates/Feature(big).md', 'big one\n'],
      ['.gitlab/issue_templates/notes.txt', 'not a template\n'],
      ['.gitlab/issue_templates/Upper.MD', 'wrong extension\n'],
      ['.gitlab/issue_templates/nested/Deep.md', 'deep\n'],
      ['.gitlab/merge_request_templates/Default.md', 'MR default\n'],
      ['.gitlab/merge_request_templates/Zeta.md', 'zeta\n'],
      ['README.md', 'readme\n'],
    ];
    for (const [file, content] of files) await commit(PRIV, file, content);
    await commit(PRIV, '.gitlab/issue_templates/Other.md', 'other branch\n', 'other', { start_branch: 'main' });
    await commit(PUB, 'README.md', 'hi\n');
  });
  after(() => t.close());

  describe('types and names', () => {
    it('any other type is 400 before the project is looked up', async () => {
      for (const url of [
        '/projects/999999/templates/unknown',
        '/projects/999999/templates/metrics_dashboard_ymls/Default',
        `/projects/${PRIV}/templates/Licenses`,
        `/projects/${PRIV}/templates/unknown/mit`,
      ]) {
        await fails(url, null, 400, BAD_TYPE);
        await fails(url, stranger.token, 400, BAD_TYPE);
      }
    });

    it('source_template_project_id must be an integer (400, also before the project)', async () => {
      await fails(`/projects/${PUB}/templates/gitignores/Ruby?source_template_project_id=abc`, alice.token, 400, {
        error: 'source_template_project_id is invalid',
      });
      await fails('/projects/999999/templates/gitignores/Ruby?source_template_project_id=abc', alice.token, 400, {
        error: 'source_template_project_id is invalid',
      });
    });

    it('C++ and C%2B%2B both fetch the C++ gitignore; parentheses route; other characters do not', async () => {
      const text = EXPECTED.gitignores.find((g) => g.key === 'C++')!.text;
      for (const name of ['C++', 'C%2B%2B']) {
        assert.deepEqual(
          (await ok(`/projects/${PUB}/templates/gitignores/${name}`)).json,
          { name: 'C++', content: text },
          name,
        );
      }
      await fails(`/projects/${PUB}/templates/gitignores/Ruby(old)`, alice.token, 404, NO_TEMPLATE);
      for (const name of ['Ru@by', 'Ru,by', 'Ru~by', 'Ru!by', 'Ru$by', 'Ru*by', 'Ru;by']) {
        await fails(`/projects/${PUB}/templates/gitignores/${name}`, alice.token, 404, NO_ROUTE);
      }
    });

    it('a traversal after decoding is 400 name should be a valid file path (docs/gitlab-compatibility.md#d6)', async () => {
      for (const type of [...FILE_TYPES, 'licenses', 'issues', 'merge_requests']) {
        await fails(`/projects/${PUB}/templates/${type}/%2e%2e%2fPython%2ea`, alice.token, 400, {
          error: 'name should be a valid file path',
        });
      }
    });

    it('an unknown template is 404 Template Not Found; names are case-sensitive', async () => {
      for (const url of [
        'gitignores/ruby',
        'gitignores/Nope',
        'dockerfiles/binary',
        'gitlab_ci_ymls/Nope',
        'licenses/nope',
        'licenses/MIT',
        'gitlab_ci_ymls/Browser-Performance',
        'issues/Nope',
        'merge_requests/Nope',
      ]) {
        await fails(`/projects/${PRIV}/templates/${url}`, alice.token, 404, NO_TEMPLATE);
      }
    });
  });

  describe('lists', () => {
    for (const type of FILE_TYPES) {
      it(`${type}: exactly {key, name} in category order, byte-sorted, across pages`, async () => {
        const { items, total } = await all(PUB, type, 100);
        assert.deepEqual(
          items,
          EXPECTED[type].map(({ key }) => ({ key, name: key })),
        );
        assert.equal(total, String(EXPECTED[type].length));
      });
    }

    it('gitlab_ci_ymls hides the .latest variants', async () => {
      const { items } = await all(PUB, 'gitlab_ci_ymls', 100);
      assert.ok(!items.some((i: any) => i.key.includes('.latest')));
      assert.ok(items.some((i: any) => i.key === 'Terraform'));
    });

    it('licenses: every license of the package, non-popular by key then popular by key, 20 per page', async () => {
      const expected = LICENSES.map((l) => ({ key: l.key, name: l.title }));
      assert.deepEqual(
        expected.slice(-3).map((l) => l.key),
        ['apache-2.0', 'gpl-3.0', 'mit'],
      );
      const first = await ok(`/projects/${PUB}/templates/licenses`);
      assert.deepEqual(first.json, expected.slice(0, 20));
      const q = (page: number) =>
        `${BASE}/api/v4/projects/${PUB}/templates/licenses?id=${PUB}&page=${page}&per_page=20&type=licenses`;
      assert.deepEqual(
        [
          first.headers['x-total'],
          first.headers['x-total-pages'],
          first.headers['x-per-page'],
          first.headers['x-page'],
          first.headers['x-next-page'],
          first.headers['x-prev-page'],
        ],
        [String(expected.length), '2', '20', '1', '2', ''],
      );
      assert.equal(first.headers.link, `<${q(2)}>; rel="next", <${q(1)}>; rel="first", <${q(2)}>; rel="last"`);
      const second = await ok(`/projects/${PUB}/templates/licenses?page=2`);
      assert.equal(second.headers.link, `<${q(1)}>; rel="prev", <${q(1)}>; rel="first", <${q(2)}>; rel="last"`);
      assert.deepEqual([...first.json, ...second.json], expected);
      assert.deepEqual((await all(PUB, 'licenses', 7)).items, expected);
    });

    it('issues and merge_requests: .md files directly in the directory at the default branch head', async () => {
      assert.deepEqual(
        (await ok(`/projects/${PRIV}/templates/issues`)).json,
        ['Bug', 'Feature(big)', 'a'].map((k) => ({ key: k, name: k })),
      );
      assert.deepEqual(
        (await ok(`/projects/${PRIV}/templates/merge_requests`)).json,
        ['Default', 'Zeta'].map((k) => ({ key: k, name: k })),
      );
      for (const type of ['issues', 'merge_requests']) {
        assert.deepEqual((await ok(`/projects/${EMPTY}/templates/${type}`)).json, [], `${type} of an empty repository`);
        assert.deepEqual((await ok(`/projects/${PUB}/templates/${type}`)).json, [], `${type} without the directory`);
      }
    });
  });

  describe('single templates', () => {
    for (const type of FILE_TYPES) {
      it(`every built-in ${type} template once, as {name, content}`, async () => {
        const seen = new Set<string>();
        for (const { key, text } of EXPECTED[type]) {
          if (seen.has(key)) continue; // e.g. AL in Languages and Global: the first category wins (#template-lookup)
          seen.add(key);
          const res = await ok(`/projects/${PUB}/templates/${type}/${encodeURIComponent(key)}`, null);
          assert.deepEqual(res.json, { name: key, content: type === 'gitignores' ? text : HEADER + text }, key);
        }
      });
    }

    it('Terraform.latest is fetchable by its full key although not listed', async () => {
      const text = fs.readFileSync(path.join(DATA, 'gitlab-ci', 'Terraform.latest.gitlab-ci.yml'), 'utf8');
      assert.deepEqual((await ok(`/projects/${PUB}/templates/gitlab_ci_ymls/Terraform.latest`)).json, {
        name: 'Terraform.latest',
        content: HEADER + text,
      });
    });

    it('every license once (anonymous: year filled, the rest unchanged), 11 keys in order', async () => {
      for (const { key } of LICENSES) {
        const res = await ok(`/projects/${PUB}/templates/licenses/${key}`, null);
        assert.deepEqual(Object.keys(res.json), LICENSE_KEYS, key);
        assert.deepEqual(res.json, expectedLicense(key), key);
      }
    });

    it("MIT: year, fullname param, else the caller's name, else unchanged for anonymous", async () => {
      const url = `/projects/${PUB}/templates/licenses/mit`;
      const named = (await ok(`${url}?fullname=Anton%20MIT&project=Widget`)).json;
      assert.deepEqual(named, expectedLicense('mit', { fullname: 'Anton MIT', project: 'Widget' }));
      assert.ok(named.content.includes(`Copyright (c) ${YEAR} Anton MIT\n`));
      for (const q of ['', '?fullname=']) {
        const caller = (await ok(url + q)).json;
        assert.deepEqual(caller, expectedLicense('mit', { fullname: 'ALICE' }), q);
        assert.ok(caller.content.includes(`Copyright (c) ${YEAR} ALICE\n`));
      }
      const anon = (await ok(url, null)).json;
      assert.ok(anon.content.includes(`Copyright (c) ${YEAR} [fullname]\n`), anon.content);
      assert.deepEqual(
        [anon.nickname, anon.popular, anon.source_url, anon.html_url],
        [null, true, 'https://spdx.org/licenses/MIT.html', 'http://choosealicense.com/licenses/mit/'],
      );
    });

    it('Apache-2.0: [yyyy] and [name of copyright owner]', async () => {
      const res = (await ok(`/projects/${PUB}/templates/licenses/apache-2.0?fullname=Anton`)).json;
      assert.deepEqual(res, expectedLicense('apache-2.0', { fullname: 'Anton' }));
      assert.ok(res.content.includes(`Copyright ${YEAR} Anton\n`));
      assert.ok(
        (await ok(`/projects/${PUB}/templates/licenses/apache-2.0`, null)).json.content.includes(
          `Copyright ${YEAR} [name of copyright owner]\n`,
        ),
      );
    });

    it("values are filled in GitLab's order (a full-name placeholder inside the project is filled) and any characters survive", async () => {
      const fullname = 'Ann "Q" \\ O\'Neil\n\u00e9\u{1F600} <project> $1';
      const project = 'Tool for [fullname] & {year}';
      const query = `fullname=${encodeURIComponent(fullname)}&project=${encodeURIComponent(project)}`;
      const res = await ok(`/projects/${PUB}/templates/licenses/gpl-3.0?${query}`);
      assert.deepEqual(res.json, expectedLicense('gpl-3.0', { fullname, project }));
      assert.ok(res.json.content.includes(`    Tool for ${fullname} & {year}\n`), res.json.content.slice(0, 2000));
      assert.ok(res.json.content.includes(`Copyright (C) ${YEAR}  ${fullname}\n`));
      // The deprecated endpoint fills the same way.
      assert.deepEqual((await ok(`/templates/licenses/gpl-3.0?${query}`)).json, res.json);
    });

    for (const key of ['gpl-3.0', 'agpl-3.0']) {
      it(`${key}: <year>, <name of author> (two spaces kept) and the one-line program description`, async () => {
        const res = (
          await ok(
            `/projects/${PUB}/templates/licenses/${key}?fullname=Fullname%20Placeholder&project=Widget%20does%20things`,
          )
        ).json;
        assert.deepEqual(
          res,
          expectedLicense(key, { fullname: 'Fullname Placeholder', project: 'Widget does things' }),
        );
        assert.ok(res.content.includes(`Copyright (C) ${YEAR}  Fullname Placeholder\n`));
        assert.ok(res.content.includes('    Widget does things\n'));
        assert.ok(!res.content.includes('<one line to give'));
        const anon = (await ok(`/projects/${PUB}/templates/licenses/${key}`, null)).json.content;
        assert.ok(
          anon.includes(`Copyright (C) ${YEAR}  <name of author>`) &&
            anon.includes("<one line to give the program's name"),
        );
        assert.equal(res.nickname, licenseData(key).nickname);
        assert.equal(res.source_url, `https://spdx.org/licenses/${key.toUpperCase()}.html`);
      });
    }

    it('issues and merge_requests: file text unchanged; nested with %2F; parentheses; not other branches', async () => {
      const cases: [string, object][] = [
        ['issues/Bug', { name: 'Bug', content: '## Bug\n\nSteps:\n' }],
        ['issues/a', { name: 'a', content: 'lower\n' }],
        ['issues/Feature(big)', { name: 'Feature(big)', content: 'big one\n' }],
        ['issues/nested%2FDeep', { name: 'nested/Deep', content: 'deep\n' }],
        ['merge_requests/Default', { name: 'Default', content: 'MR default\n' }],
      ];
      for (const [url, body] of cases)
        assert.deepEqual((await ok(`/projects/${PRIV}/templates/${url}`)).json, body, url);
      for (const url of ['issues/Other', 'issues/notes', 'issues/Upper', 'issues/Bug.md', 'merge_requests/Bug']) {
        await fails(`/projects/${PRIV}/templates/${url}`, alice.token, 404, NO_TEMPLATE);
      }
      await fails(`/projects/${EMPTY}/templates/issues/Bug`, alice.token, 404, NO_TEMPLATE);
    });
  });

  describe('permissions (docs/gitlab-compatibility.md#template-permissions)', () => {
    const singles: Record<string, string> = {
      dockerfiles: 'Binary',
      gitignores: 'Ruby',
      gitlab_ci_ymls: 'Ruby',
      licenses: 'mit',
      merge_requests: 'Default',
      issues: 'Bug',
    };

    it("a guest of a private project gets 403 with GitLab's sentence except for issues", async () => {
      for (const [type, name] of Object.entries(singles)) {
        for (const url of [
          `/projects/${PRIV}/templates/${type}`,
          `/projects/${PRIV}/templates/${type}/${name}`,
          `/projects/${PRIV}/templates/${type}/Nope`,
        ]) {
          if (type === 'issues') continue;
          await fails(url, guest.token, 403, denied(type));
        }
      }
      assert.deepEqual(
        (await ok(`/projects/${PRIV}/templates/issues`, guest.token)).json.map((i: any) => i.key),
        ['Bug', 'Feature(big)', 'a'],
      );
      assert.deepEqual((await ok(`/projects/${PRIV}/templates/issues/Bug`, guest.token)).json, {
        name: 'Bug',
        content: '## Bug\n\nSteps:\n',
      });
    });

    it('a reporter of a private project reads every type', async () => {
      for (const [type, name] of Object.entries(singles)) {
        await ok(`/projects/${PRIV}/templates/${type}`, reporter.token);
        assert.equal(
          (await ok(`/projects/${PRIV}/templates/${type}/${name}`, reporter.token)).json.name,
          type === 'licenses' ? 'MIT License' : name,
        );
      }
    });

    it('a non-member or anonymous caller of a private project gets 404 Project Not Found', async () => {
      for (const token of [stranger.token, null]) {
        for (const type of Object.keys(singles)) {
          await fails(`/projects/${PRIV}/templates/${type}`, token, 404, NO_PROJECT);
          await fails(`/projects/${PRIV}/templates/${type}/${singles[type]}`, token, 404, NO_PROJECT);
        }
      }
      await fails('/projects/999999/templates/licenses', alice.token, 404, NO_PROJECT);
    });

    it('anonymous callers use public projects', async () => {
      assert.deepEqual(
        (await ok(`/projects/${PUB}/templates/gitignores?per_page=2`, null)).json,
        EXPECTED.gitignores.slice(0, 2).map(({ key }) => ({ key, name: key })),
      );
      assert.deepEqual((await ok(`/projects/${PUB}/templates/dockerfiles/Binary`, null)).json.name, 'Binary');
      assert.deepEqual((await ok(`/projects/${PUB}/templates/issues`, null)).json, []);
      assert.deepEqual(
        (await ok(`/projects/${PUB}/templates/licenses/mit`, stranger.token)).json,
        expectedLicense('mit', { fullname: 'STRANGER' }),
      );
    });
  });
});

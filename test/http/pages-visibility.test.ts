// A page never shows what the API would hide: for every kind of viewer (anonymous, external, non-member,
// guest, reporter, author, admin) and every snippet (private, internal, public, in private, internal and
// public projects), the snippet's page and raw answer 200 exactly when the API answers 200 for the same
// viewer, and 404 otherwise; the project's snippet list page shows exactly what the API's list shows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const LEVELS = ['private', 'internal', 'public'] as const;
const pathOf = (url: string) => new URL(url).pathname;

interface Viewer {
  name: string;
  token: string | null;
  cookie?: string;
}

describe('pages show exactly what the API shows, for every viewer', () => {
  let t: TestApp;
  const viewers: Viewer[] = [];
  const snippets: { web_url: string; raw_url: string; id: number; project_id: number; title: string }[] = [];
  const projects: { id: number; web_url: string }[] = [];

  async function person(username: string, opts: { external?: boolean; admin?: boolean } = {}) {
    const user = await t.must('POST', '/users', ROOT_TOKEN, {
      username,
      email: `${username}@example.com`,
      name: username,
      password: PASSWORD,
      ...opts,
    });
    const token = await t.must('POST', `/users/${user.id}/personal_access_tokens`, ROOT_TOKEN, {
      name: 't',
      scopes: ['api'],
    });
    viewers.push({ name: username, token: token.token, cookie: await signInCookie(t, username, PASSWORD) });
    return user;
  }

  before(async () => {
    t = await createTestApp();
    viewers.push({ name: 'anonymous', token: null });
    await person('external', { external: true });
    await person('outsider');
    const guest = await person('guest');
    const reporter = await person('reporter');
    const author = await person('author');
    await person('boss', { admin: true });
    for (const visibility of LEVELS) {
      const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: `${visibility}-p`, visibility });
      projects.push(project);
      for (const [user, level] of [
        [guest, 10],
        [reporter, 20],
        [author, 20],
      ] as const) {
        await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: user.id, access_level: level });
      }
      for (const snippetVisibility of LEVELS) {
        for (const [by, sudo] of [
          ['root', undefined],
          ['author', author.id],
        ] as const) {
          const res = await t.api('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
            title: `${snippetVisibility} by ${by} in ${visibility}`,
            visibility: snippetVisibility,
            files: [{ file_path: 'a.txt', content: 'x' }],
            ...(sudo && { sudo }),
          });
          if (res.statusCode === 201) snippets.push(res.json);
        }
      }
    }
  });
  after(() => t.close());

  it('each snippet page and raw: 200 exactly where the API answers 200, else hidden', async () => {
    assert.ok(snippets.length >= 12, `${snippets.length} snippets`);
    for (const viewer of viewers) {
      for (const s of snippets) {
        const api = await t.api('GET', `/projects/${s.project_id}/snippets/${s.id}`, viewer.token);
        for (const url of [s.web_url, s.raw_url]) {
          const page = await t.request({
            method: 'GET',
            url: pathOf(url),
            token: null,
            headers: viewer.cookie ? { cookie: viewer.cookie } : {},
          });
          if (api.statusCode === 200)
            assert.equal(page.statusCode, 200, `${viewer.name}: ${s.title} ${url} (API ${api.statusCode})`);
          else assertHiddenPage(page, url, viewer.cookie !== undefined);
        }
      }
    }
  });

  it("each project's snippet list page lists exactly what the API lists", async () => {
    for (const viewer of viewers.filter((v) => v.token)) {
      for (const project of projects) {
        const api = await t.api('GET', `/projects/${project.id}/snippets?per_page=100`, viewer.token);
        const page = await t.request({
          method: 'GET',
          url: `${pathOf(project.web_url)}/-/snippets`,
          token: null,
          headers: { cookie: viewer.cookie! },
        });
        if (api.statusCode !== 200) {
          assert.equal(page.statusCode, 404, `${viewer.name} ${project.web_url}`);
          continue;
        }
        const listed = [...page.body.matchAll(/-\/snippets\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);
        assert.deepEqual(
          listed,
          api.json.map((s: { title: string }) => s.title),
          `${viewer.name} ${project.web_url}`,
        );
      }
    }
  });
});

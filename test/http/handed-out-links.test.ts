// Every link the API hands out opens a page a person can use: each URL of this instance found anywhere in the
// answers of the API's read endpoints (web_url, raw_url, files' raw_url, commits', branches', members', groups',
// namespaces', search results'...) is opened as a browser of the signed-in owner opens it, and must answer 200.
// The clone URLs are git's, and cloning them is tested elsewhere (test/git).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const BASE = 'http://gitlab.example.com';
const PASSWORD = 'correct horse battery';
const GIT_URLS = new Set(['http_url_to_repo', 'ssh_url_to_repo']);

/** Every [key, URL] below `value` whose URL is on this instance. */
function linksIn(value: unknown, key = ''): [string, string][] {
  if (typeof value === 'string') return value.startsWith(`${BASE}/`) && !GIT_URLS.has(key) ? [[key, value]] : [];
  if (Array.isArray(value)) return value.flatMap((v) => linksIn(v, key));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => linksIn(v, k));
  return [];
}

describe('links the API hands out', () => {
  let t: TestApp;
  let cookie: string;
  let token: string;
  const reads: string[] = [];

  before(async () => {
    t = await createTestApp({ externalUrl: BASE });
    const erin = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'erin',
      email: 'erin@example.com',
      name: 'Erin',
      password: PASSWORD,
    });
    token = (
      await t.must('POST', `/users/${erin.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'e', scopes: ['api'] })
    ).token;
    cookie = await signInCookie(t, 'erin', PASSWORD);
    const group = await t.must('POST', '/groups', token, { name: 'Team', path: 'team', visibility: 'private' });
    const sub = await t.must('POST', '/groups', token, { name: 'Sub', path: 'sub', parent_id: group.id });
    const project = await t.must('POST', '/projects', token, { name: 'tools', namespace_id: sub.id });
    const mine = await t.must('POST', '/projects', token, { name: 'mine', visibility: 'internal' });
    for (const [path, content] of [
      ['README.md', '# Tools'],
      ['bin/run sh', 'echo hi'],
    ])
      await t.must('POST', `/projects/${project.id}/repository/files/${encodeURIComponent(path)}`, token, {
        branch: 'main',
        content,
        commit_message: `Add ${path}`,
      });
    await t.must('POST', `/projects/${project.id}/repository/branches`, token, { branch: 'feature/ä+b', ref: 'main' });
    const files = [
      { file_path: 'a b.md', content: '# A' },
      { file_path: 'dir/ü.txt', content: 'one' },
    ];
    const shared = await t.must('POST', `/projects/${project.id}/snippets`, token, {
      title: 'Shared',
      visibility: 'private',
      files,
    });
    const personal = await t.must('POST', '/snippets', token, { title: 'Personal', visibility: 'private', files });
    const P = project.id;
    reads.push(
      '/user',
      `/users/${erin.id}`,
      '/users?username=erin',
      '/groups',
      `/groups/${group.id}`,
      `/groups/${group.id}/subgroups`,
      `/groups/${group.id}/descendant_groups`,
      `/groups/${group.id}/projects?include_subgroups=true`,
      `/groups/${group.id}/members`,
      '/namespaces',
      `/namespaces/${sub.id}`,
      '/projects?membership=true',
      `/projects/${P}`,
      `/projects/${mine.id}`,
      `/users/${erin.id}/projects`,
      `/projects/${P}/members/all`,
      `/projects/${P}/snippets`,
      `/projects/${P}/snippets/${shared.id}`,
      '/snippets',
      `/snippets/${personal.id}`,
      `/projects/${P}/repository/commits?with_stats=true`,
      `/projects/${P}/repository/commits/main`,
      `/projects/${P}/repository/branches`,
      `/projects/${P}/repository/branches/${encodeURIComponent('feature/ä+b')}`,
      `/projects/${P}/repository/tree?recursive=true`,
      '/search?scope=snippet_titles&search=Shared',
      `/projects/${P}/search?scope=snippet_titles&search=Shared`,
    );
  });
  after(() => t.close());

  it('each URL of this instance in the answers opens a page for the owner', async () => {
    const links = new Map<string, string>();
    for (const read of reads) {
      const res = await t.api('GET', read, token);
      assert.equal(res.statusCode, 200, `${read}: ${res.body}`);
      for (const [key, url] of linksIn(res.json)) links.set(url, `${key} of ${read}`);
    }
    const failed: string[] = [];
    for (const [url, where] of links) {
      const res = await t.request({ method: 'GET', url: url.slice(BASE.length), token: null, headers: { cookie } });
      if (res.statusCode !== 200) failed.push(`${url} (${where}): ${res.statusCode}`);
    }
    assert.deepEqual(failed, []);
    // What was opened: every kind of link.
    const kinds = new Set([...links.values()].map((where) => where.split(' ')[0]));
    assert.deepEqual([...kinds].sort(), ['raw_url', 'web_url']);
    assert.ok(links.size >= 15, `${links.size} links`);
  });
});

// An instance served below a path of its host (SNIPPETD_EXTERNAL_URL https://host/tools/snippets, GitLab's
// relative URL root): the proxy in front may pass that path on or strip it, and either way every link, form,
// redirect and cookie a page hands out stays below it, and every link leads to a page. The oracle is a crawl:
// from the pages a visitor and a signed-in user start at, every link and form on every page reached is read
// and every link followed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const HOST = 'http://snippets.example.com';
const PREFIX = '/tools/snippets';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Every URL a page names in a link, an image, a script, a stylesheet or a form, its entities decoded. */
const urlsIn = (html: string) =>
  [...html.matchAll(/\s(?:href|src|action)="([^"]*)"/g)].map((m) =>
    m[1]
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'"),
  );

/**
 * The path below the host that a URL of this instance names; null for a URL elsewhere, or one relative to
 * the page (below it whatever the prefix: a fragment, a link in a rendered file).
 */
function pathOf(url: string): string | null {
  if (url.startsWith(`${HOST}/`)) return url.slice(HOST.length);
  return url.startsWith('/') && !url.startsWith('//') ? url : null;
}

const underPrefix = (path: string) => path === PREFIX || path.startsWith(`${PREFIX}/`) || path.startsWith(`${PREFIX}?`);

describe('pages below a path prefix', () => {
  let t: TestApp;
  let erin: any;
  let cookie: string;
  const starts: string[] = [];

  const get = (url: string, c?: string) =>
    t.request({ method: 'GET', url, token: null, headers: c ? { cookie: c } : {} });

  before(async () => {
    t = await createTestApp({ externalUrl: `${HOST}${PREFIX}` });
    erin = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'erin',
      email: 'erin@example.com',
      name: 'Erin',
      password: PASSWORD,
    });
    const token = (
      await t.must('POST', `/users/${erin.id}/personal_access_tokens`, ROOT_TOKEN, { name: 'e', scopes: ['api'] })
    ).token;
    const project = await t.must('POST', '/projects', token, { name: 'team', visibility: 'public' });
    const shared = await t.must('POST', `/projects/${project.id}/snippets`, token, {
      title: 'Shared',
      visibility: 'public',
      files: [
        { file_path: 'a.md', content: '# A\n\n[b](b.txt)' },
        { file_path: 'dir/b.txt', content: 'one\ntwo\n' },
      ],
    });
    await t.must('PUT', `/projects/${project.id}/snippets/${shared.id}`, token, {
      files: [{ action: 'update', file_path: 'dir/b.txt', content: 'one\nthree\n' }],
    });
    // A group with a subgroup, and a project there with files: the group, tree and file pages.
    const ops = await t.must('POST', '/groups', ROOT_TOKEN, { name: 'ops', path: 'ops', visibility: 'public' });
    const infra = await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'infra',
      path: 'infra',
      parent_id: ops.id,
      visibility: 'public',
    });
    const tools = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'tools',
      namespace_id: infra.id,
      visibility: 'public',
    });
    for (const [file, content] of [
      ['README.md', 'See [the script](bin/run.sh).'],
      ['bin/run.sh', 'echo hi\n'],
    ])
      await t.must('POST', `/projects/${tools.id}/repository/files/${encodeURIComponent(file)}`, ROOT_TOKEN, {
        branch: 'main',
        content,
        commit_message: `Add ${file}`,
      });
    const personal = await t.must('POST', '/snippets', token, {
      title: 'Mine',
      visibility: 'public',
      files: [{ file_path: 'x.js', content: 'let x = 1;\n' }],
    });
    starts.push(
      `${PREFIX}/`,
      `${PREFIX}/explore/snippets`,
      `${PREFIX}/erin`,
      `${PREFIX}/erin/team`,
      `${PREFIX}/ops`,
      `${PREFIX}/groups/ops/infra`,
      `${PREFIX}/ops/infra/tools`,
      `${PREFIX}/erin/team/-/snippets`,
      `${PREFIX}/erin/team/-/snippets/${shared.id}`,
      `${PREFIX}/erin/team/-/snippets/${shared.id}/edit`,
      `${PREFIX}/erin/team/-/snippets/${shared.id}/revisions`,
      `${PREFIX}/-/snippets/${personal.id}`,
      `${PREFIX}/-/snippets/new`,
      `${PREFIX}/search?search=one`,
      `${PREFIX}/-/user_settings/personal_access_tokens`,
      `${PREFIX}/users/sign_in`,
    );
  });
  after(() => t.close());

  it('signs in below the prefix: its form cookie, its redirect and its session are there', async () => {
    const form = await get(`${PREFIX}/users/sign_in`);
    assert.equal(form.statusCode, 200, form.body);
    const formCookies = [form.headers['set-cookie']].flat() as string[];
    assert.ok(formCookies.length > 0);
    for (const c of formCookies) assert.match(c, new RegExp(`; Path=${PREFIX}/users/`), c);
    assert.ok(urlsIn(form.body).includes(`${PREFIX}/users/sign_in`), 'the form posts below the prefix');
    const authenticity = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1];
    const res = await t.request({
      method: 'POST',
      url: `${PREFIX}/users/sign_in`,
      token: null,
      headers: { ...FORM, cookie: formCookies.map((c) => c.split(';')[0]).join('; ') },
      payload: new URLSearchParams({ authenticity_token: authenticity, login: 'erin', password: PASSWORD }).toString(),
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${PREFIX}/`);
    const session = ([res.headers['set-cookie']].flat() as string[]).find((c) => c.startsWith('_snippetd_session='))!;
    assert.match(session, new RegExp(`; Path=${PREFIX}(/)?;`));
    cookie = session.split(';')[0];
    assert.equal((await get(`${PREFIX}/dashboard/snippets`, cookie)).statusCode, 200);
  });

  for (const who of ['a visitor', 'someone signed in'] as const) {
    it(`every link, form and redirect ${who} meets stays below the prefix, and every link leads somewhere`, async () => {
      const c = who === 'a visitor' ? undefined : cookie;
      if (c === undefined && who !== 'a visitor') assert.fail('not signed in');
      const seen = new Set<string>();
      const queue = [...starts];
      const wrong: string[] = [];
      while (queue.length > 0 && seen.size < 400) {
        const url = queue.shift()!;
        if (seen.has(url)) continue;
        seen.add(url);
        const res = await get(url, c);
        if (res.statusCode === 404 || res.statusCode >= 500) wrong.push(`${url}: ${res.statusCode}`);
        const location = res.headers.location as string | undefined;
        if (location !== undefined) {
          const path = pathOf(location);
          if (path === null || !underPrefix(path)) wrong.push(`${url} redirects to ${location}`);
          else queue.push(path);
        }
        if (!String(res.headers['content-type']).startsWith('text/html')) continue;
        for (const found of urlsIn(res.body)) {
          const path = pathOf(found);
          if (path === null) continue;
          if (!underPrefix(path)) wrong.push(`${url} names ${found}`);
          // Links, not forms' actions: a form's action is what the next test posts to.
          else if (!res.body.includes(`action="${found.replace(/&/g, '&amp;')}"`)) queue.push(path.split('#')[0]);
        }
      }
      assert.deepEqual(wrong, []);
      assert.ok(seen.size > 30, `only ${seen.size} pages reached`);
    });
  }

  it('a form posted below the prefix answers with a redirect below it', async () => {
    const form = await get(`${PREFIX}/-/snippets/new`, cookie);
    assert.equal(form.statusCode, 200);
    const authenticity = /name="authenticity_token" value="([^"]+)"/.exec(form.body)![1];
    const res = await t.request({
      method: 'POST',
      url: `${PREFIX}/-/snippets/new`,
      token: null,
      headers: { ...FORM, cookie, origin: HOST },
      payload: new URLSearchParams([
        ['authenticity_token', authenticity],
        ['title', 'Posted'],
        ['visibility', 'private'],
        ['files[0][file_path]', 'p.txt'],
        ['files[0][content]', 'posted'],
        ['save', '1'],
      ]).toString(),
    });
    assert.equal(res.statusCode, 303, res.body);
    const id = Number(new RegExp(`^${PREFIX}/-/snippets/(\\d+)$`).exec(res.headers.location as string)?.[1]);
    assert.equal((await t.must('GET', `/snippets/${id}`, ROOT_TOKEN)).title, 'Posted');
  });

  it('a proxy that strips the prefix is served the same pages, their links below the prefix', async () => {
    const res = await get('/explore/snippets');
    assert.equal(res.statusCode, 200);
    const paths = urlsIn(res.body)
      .map(pathOf)
      .filter((p) => p !== null);
    assert.ok(paths.length > 5);
    assert.deepEqual(
      paths.filter((p) => !underPrefix(p)),
      [],
    );
  });

  it('the API answers below the prefix and without it, its URLs below the prefix', async () => {
    const below = await t.request({ method: 'GET', url: `${PREFIX}/api/v4/snippets/all?per_page=1` });
    assert.equal(below.statusCode, 200, below.body);
    const bare = await t.request({ method: 'GET', url: '/api/v4/snippets/all?per_page=1' });
    assert.equal(bare.body, below.body);
    assert.ok(below.json[0].web_url.startsWith(`${HOST}${PREFIX}/-/snippets/`), below.json[0].web_url);
    assert.match(String(below.headers.link), new RegExp(`<${HOST}${PREFIX}/api/v4/snippets/all\\?`));
    // git's first request of a clone, at the clone URL the API hands out.
    const [shared] = (await t.request({ method: 'GET', url: `${PREFIX}/api/v4/snippets/public?per_page=1` })).json;
    const clone = shared.http_url_to_repo as string;
    assert.ok(clone.startsWith(`${HOST}${PREFIX}/`), clone);
    const refs = await t.request({
      method: 'GET',
      url: `${clone.slice(HOST.length)}/info/refs?service=git-upload-pack`,
      token: null,
    });
    assert.equal(refs.statusCode, 200, refs.body);
    assert.equal(refs.headers['content-type'], 'application/x-git-upload-pack-advertisement');
  });
});

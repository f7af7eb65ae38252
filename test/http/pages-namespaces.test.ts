// Group and user pages: a group's web_url lists the subgroups and projects the viewer may see, a user's
// web_url the snippets the viewer may see; anything else is hidden, as a page and in every list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname;

describe('group and user pages', () => {
  let t: TestApp;
  let team: any;
  let author: any;
  let memberCookie: string;
  const view = (url: string, cookie?: string) =>
    t.request({ method: 'GET', url: pathOf(url), token: null, headers: cookie ? { cookie } : {} });

  before(async () => {
    t = await createTestApp();
    author = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'author',
      email: 'author@example.com',
      name: 'Ann <Author>',
      password: PASSWORD,
    });
    team = await t.must('POST', '/groups', ROOT_TOKEN, { name: 'Team', path: 'team', visibility: 'public' });
    await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'Open sub',
      path: 'open',
      parent_id: team.id,
      visibility: 'public',
    });
    await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'Closed sub',
      path: 'closed',
      parent_id: team.id,
      visibility: 'private',
    });
    const open = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'open-tools',
      namespace_id: team.id,
      visibility: 'public',
    });
    const closed = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'closed-tools',
      namespace_id: team.id,
      visibility: 'private',
    });
    await t.must('POST', `/projects/${open.id}/members`, ROOT_TOKEN, { user_id: author.id, access_level: 30 });
    await t.must('POST', `/projects/${closed.id}/members`, ROOT_TOKEN, { user_id: author.id, access_level: 30 });
    const write = (project: any, title: string, visibility: string) =>
      t.must('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
        title,
        visibility,
        files: [{ file_path: 'a.txt', content: title }],
        sudo: author.id,
      });
    await write(open, 'open note', 'public');
    await write(open, 'internal note', 'internal');
    await write(closed, 'closed note', 'private');
    memberCookie = await signInCookie(t, 'author', PASSWORD);
  });
  after(() => t.close());

  it("a group's web_url lists what an anonymous visitor may see, and nothing else", async () => {
    const res = await view(team.web_url);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1>Team<\/h1>/);
    assert.match(res.body, />Open sub<\/a>/);
    assert.match(res.body, />open-tools<\/a>/);
    assert.doesNotMatch(res.body, /Closed sub|closed-tools/);
    // A top-level group also answers at /<path>, as in GitLab.
    assert.equal((await view(`${new URL(team.web_url).origin}/team`)).statusCode, 200);
    assertHiddenPage(await view(`${team.web_url}/closed`), `${team.web_url}/closed`, false);
  });

  it("a member sees the group's private project", async () => {
    const res = await view(team.web_url, memberCookie);
    assert.match(res.body, />closed-tools<\/a>/);
  });

  it("a user's web_url lists only the snippets the viewer may see", async () => {
    const anonymous = await view(author.web_url);
    assert.equal(anonymous.statusCode, 200);
    assert.match(anonymous.body, /<h1>Ann &lt;Author&gt;<\/h1>/);
    assert.match(anonymous.body, />open note<\/a>/);
    assert.doesNotMatch(anonymous.body, /internal note|closed note/);
    const member = await view(author.web_url, memberCookie);
    for (const title of ['open note', 'internal note', 'closed note'])
      assert.match(member.body, new RegExp(`>${title}</a>`));
    assertHiddenPage(await view(`${new URL(author.web_url).origin}/nobody-here`), '/nobody-here', false);
  });

  it('/explore/snippets lists what the viewer may see across the instance; /dashboard/snippets their own', async () => {
    const origin = new URL(author.web_url).origin;
    const anonymous = await view(`${origin}/explore/snippets`);
    assert.equal(anonymous.statusCode, 200);
    assert.match(anonymous.body, />open note<\/a>/);
    assert.doesNotMatch(anonymous.body, /internal note|closed note/);
    const member = await view(`${origin}/explore/snippets`, memberCookie);
    for (const title of ['open note', 'internal note', 'closed note'])
      assert.match(member.body, new RegExp(`>${title}</a>`));
    const visitor = await view(`${origin}/dashboard/snippets`);
    assert.equal(visitor.statusCode, 302);
    assert.equal(visitor.headers.location, '/users/sign_in?redirect_to=%2Fdashboard%2Fsnippets');
    const own = await view(`${origin}/dashboard/snippets`, memberCookie);
    assert.equal(own.statusCode, 200);
    assert.match(own.body, /<h1>Your snippets<\/h1>/);
    assert.match(own.body, />closed note<\/a>/);
  });
});

describe('paged lists on group, user and explore pages', () => {
  let t: TestApp;
  let group: any;
  const publicTitles: string[] = [];
  const page = (path: string) => t.request({ method: 'GET', url: path, token: null });
  const linkTitles = (body: string) =>
    [...body.matchAll(/<li><a href="[^"]*\/-\/snippets\/\d+">([^<]*)<\/a>/g)].map((m) => m[1]);
  const olderLink = (body: string) => /<a rel="next" href="https?:\/\/[^/]+([^"]*)">Older<\/a>/.exec(body)?.[1];

  before(async () => {
    t = await createTestApp();
    group = await t.must('POST', '/groups', ROOT_TOKEN, { name: 'Many', path: 'many', visibility: 'public' });
    await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'Nested',
      path: 'nested',
      parent_id: group.id,
      visibility: 'public',
    });
    await t.must('POST', '/groups', ROOT_TOKEN, {
      name: 'Hidden',
      path: 'hidden',
      parent_id: group.id,
      visibility: 'private',
    });
    const shown = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'p-00',
      namespace_id: group.id,
      visibility: 'public',
    });
    const hidden = await t.must('POST', '/projects', ROOT_TOKEN, {
      name: 'secret',
      namespace_id: group.id,
      visibility: 'private',
    });
    for (let i = 1; i < 55; i++)
      await t.must('POST', '/projects', ROOT_TOKEN, {
        name: `p-${String(i).padStart(2, '0')}`,
        namespace_id: group.id,
        visibility: 'public',
      });
    // Visible and hidden snippets interleaved, so every page has to skip some.
    for (let i = 0; i < 25; i++) {
      const title = `shown ${i}`;
      await t.must('POST', `/projects/${shown.id}/snippets`, ROOT_TOKEN, {
        title,
        visibility: 'public',
        files: [{ file_path: 'a', content: 'a' }],
      });
      await t.must('POST', `/projects/${hidden.id}/snippets`, ROOT_TOKEN, {
        title: `hidden ${i}`,
        visibility: 'private',
        files: [{ file_path: 'a', content: 'a' }],
      });
      publicTitles.unshift(title);
    }
  });
  after(() => t.close());

  it('/explore/snippets pages by "Older" links through every visible snippet once, newest first', async () => {
    const seen: string[] = [];
    let path: string | undefined = '/explore/snippets';
    let pages = 0;
    while (path) {
      const res = await page(path);
      assert.equal(res.statusCode, 200);
      const titles = linkTitles(res.body);
      assert.ok(titles.length <= 20, `${titles.length} snippets on one page`);
      seen.push(...titles);
      path = olderLink(res.body);
      pages++;
      if (path) assert.match(path, /^\/explore\/snippets\?before=\d+$/);
    }
    assert.deepEqual(seen, publicTitles);
    assert.equal(pages, 2);
    // The second page links back to the newest.
    const second = await page(olderLink((await page('/explore/snippets')).body)!);
    assert.match(second.body, /<a rel="prev" href="[^"]*\/explore\/snippets">Newest<\/a>/);
    // A cursor that is not a positive number is the first page.
    assert.deepEqual(linkTitles((await page('/explore/snippets?before=x')).body), publicTitles.slice(0, 20));
  });

  it("a user's page is paged the same way", async () => {
    const first = await page('/root');
    assert.equal(first.statusCode, 200);
    assert.deepEqual(linkTitles(first.body), publicTitles.slice(0, 20));
    const older = olderLink(first.body);
    assert.match(older!, /^\/root\?before=\d+$/);
    assert.deepEqual(linkTitles((await page(older!)).body), publicTitles.slice(20));
  });

  it("a group's projects are paged, 50 to a page, by name", async () => {
    const projectNames = (body: string) =>
      [...body.matchAll(/<li><a href="[^"]*\/many\/[^"]*">(p-\d\d|secret)<\/a>/g)].map((m) => m[1]);
    const first = await page('/groups/many');
    const names = Array.from({ length: 55 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    assert.deepEqual(projectNames(first.body), names.slice(0, 50));
    assert.match(first.body, /<a rel="next" href="[^"]*\/groups\/many\?page=2">Next<\/a>/);
    const second = await page('/groups/many?page=2');
    assert.deepEqual(projectNames(second.body), names.slice(50));
    assert.match(second.body, /<a rel="prev" href="[^"]*\/groups\/many\?page=1">Previous<\/a>/);
    assert.doesNotMatch(second.body, /rel="next"/);
  });

  it('a subgroup answers at its bare path as well as under /groups, and a hidden one is 404 at both', async () => {
    for (const path of ['/many/nested', '/groups/many/nested']) {
      const res = await page(path);
      assert.equal(res.statusCode, 200, path);
      assert.match(res.body, /<h1>Nested<\/h1>/);
    }
    for (const path of ['/many/hidden', '/groups/many/hidden', '/many/nowhere'])
      assertHiddenPage(await page(path), path, false);
    // A project at a bare path is still the project.
    assert.match((await page('/many/p-01')).body, /<h1><a href="[^"]*\/many\/p-01">p-01<\/a><\/h1>/);
  });
});

// Group and user pages: a group's web_url lists the subgroups and projects the viewer may see, a user's
// web_url the snippets the viewer may see; anything else is hidden, as a page and in every list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

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
    assert.equal((await view(`${team.web_url}/closed`)).statusCode, 404);
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
    assert.equal((await view(`${new URL(author.web_url).origin}/nobody-here`)).statusCode, 404);
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

// Personal snippet pages: the web_url, raw_url and files[].raw_url the API hands out open, as the API would
// show them to the same viewer; the embed script only for public ones; the dashboard, explore and user
// snippet lists show personal snippets next to project ones, each exactly to those who may read it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertHiddenPage, createTestApp, ROOT_TOKEN, signInCookie, type TestApp } from '../helper.ts';

const PASSWORD = 'correct horse battery';
const pathOf = (url: string) => new URL(url).pathname;

describe('personal snippet pages', () => {
  let t: TestApp;
  let alice: any;
  let aliceCookie: string;
  let bobCookie: string;
  const snippets: Record<string, any> = {};
  let projectSnippet: any;
  const view = (url: string, cookie?: string) =>
    t.request({
      method: 'GET',
      url: url.startsWith('http') ? pathOf(url) : url,
      token: null,
      headers: cookie ? { cookie } : {},
    });

  before(async () => {
    t = await createTestApp();
    alice = await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      password: PASSWORD,
    });
    await t.must('POST', '/users', ROOT_TOKEN, {
      username: 'bob',
      email: 'bob@example.com',
      name: 'Bob',
      password: PASSWORD,
    });
    for (const visibility of ['private', 'internal', 'public']) {
      snippets[visibility] = await t.must('POST', '/snippets', ROOT_TOKEN, {
        title: `${visibility} <notes>`,
        visibility,
        files: [
          { file_path: 'notes.md', content: `# ${visibility} heading` },
          { file_path: 'run.sh', content: `echo ${visibility}` },
        ],
        sudo: alice.id,
      });
    }
    const project = await t.must('POST', '/projects', ROOT_TOKEN, { name: 'tools', visibility: 'public' });
    await t.must('POST', `/projects/${project.id}/members`, ROOT_TOKEN, { user_id: alice.id, access_level: 20 });
    projectSnippet = await t.must('POST', `/projects/${project.id}/snippets`, ROOT_TOKEN, {
      title: 'in a project',
      visibility: 'public',
      files: [{ file_path: 'p.txt', content: 'p' }],
      sudo: alice.id,
    });
    aliceCookie = await signInCookie(t, 'alice', PASSWORD);
    bobCookie = await signInCookie(t, 'bob', PASSWORD);
  });
  after(() => t.close());

  it('opens web_url, raw_url and each file raw_url for those who may read it, and 404 for others', async () => {
    const readers: Record<string, [string | undefined, string[]]> = {
      anonymous: [undefined, ['public']],
      bob: [undefined, ['internal', 'public']],
      alice: [undefined, ['private', 'internal', 'public']],
    };
    readers.bob[0] = bobCookie;
    readers.alice[0] = aliceCookie;
    for (const [who, [cookie, readable]] of Object.entries(readers)) {
      for (const [visibility, s] of Object.entries(snippets)) {
        const page = await view(s.web_url, cookie);
        const raw = await view(s.raw_url, cookie);
        const file = await view(s.files[1].raw_url, cookie);
        const where = `${who} on ${visibility}`;
        if (!readable.includes(visibility)) {
          assertHiddenPage(page, s.web_url, cookie !== undefined);
          assertHiddenPage(raw, s.raw_url, cookie !== undefined);
          assertHiddenPage(file, s.files[1].raw_url, cookie !== undefined);
          continue;
        }
        assert.equal(page.statusCode, 200, where);
        assert.match(page.headers['content-type'] as string, /^text\/html/);
        assert.ok(page.body.includes(`${visibility} &lt;notes&gt;`), `${where}: the title, escaped`);
        assert.ok(
          page.body.includes(
            `<h1><a id="user-content-${visibility}-heading" class="anchor" href="#${visibility}-heading" aria-hidden="true" tabindex="-1"></a>${visibility} heading</h1>`,
          ),
          `${where}: the Markdown file rendered`,
        );
        assert.ok(page.body.includes(`/snippets/${s.id}.git`), `${where}: the clone URL`);
        assert.equal(raw.statusCode, 200, where);
        assert.equal(raw.body, `# ${visibility} heading`, where);
        assert.equal(file.statusCode, 200, where);
        assert.equal(file.body, `echo ${visibility}`, where);
      }
    }
  });

  it('serves the embed script of a public one only', async () => {
    const embed = await view(`${pathOf(snippets.public.web_url)}.js`);
    assert.equal(embed.statusCode, 200);
    assert.match(embed.headers['content-type'] as string, /^application\/javascript/);
    assert.ok(embed.body.startsWith('((markup, web) => {\n'));
    assert.ok(embed.body.includes('document.write('));
    assert.ok(embed.body.includes('public heading'));
    for (const visibility of ['internal', 'private'])
      assert.equal((await view(`${pathOf(snippets[visibility].web_url)}.js`, aliceCookie)).statusCode, 404);
  });

  it("lists them on the dashboard, explore and the author's snippets page, to those who may read them", async () => {
    const titles = (body: string) => [...body.matchAll(/-\/snippets\/(\d+)">([^<]*)</g)].map((m) => Number(m[1]));
    const dashboard = await view('/dashboard/snippets', aliceCookie);
    assert.deepEqual(titles(dashboard.body), [
      projectSnippet.id,
      snippets.public.id,
      snippets.internal.id,
      snippets.private.id,
    ]);
    assert.ok(dashboard.body.includes('Personal snippet'));
    const explore = titles((await view('/explore/snippets')).body);
    assert.deepEqual(explore, [projectSnippet.id, snippets.public.id]);
    const byAlice = await view('/users/alice/snippets', bobCookie);
    assert.equal(byAlice.statusCode, 200);
    assert.deepEqual(titles(byAlice.body), [projectSnippet.id, snippets.public.id, snippets.internal.id]);
    assertHiddenPage(await view('/users/nobody/snippets'), '/users/nobody/snippets', false);
    assertHiddenPage(await view('/users/nobody/snippets', bobCookie), '/users/nobody/snippets', true);
    const profile = await view('/alice');
    assert.ok(profile.body.includes('/users/alice/snippets'), 'the profile links to all of them');
  });
});

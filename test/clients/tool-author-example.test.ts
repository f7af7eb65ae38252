// The worked example of docs/tool-authors.md: a tool's own test suite starts snippetd in-process with a
// seed, talks to it with a real GitLab client (@gitbeaker/rest), and resets it after each test. In a tool's
// repository the import is `from 'snippetd'`; here it is the same module from the source tree. The
// database is in memory whatever SNIPPETD_TEST_DB says, so this runs in the SQLite pass only.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import { type RunningSnippetd, startSnippetd } from '../../src/index.ts';

const skip = process.env.SNIPPETD_TEST_DB === 'postgres' && 'the database is in memory: runs in the SQLite pass only';

describe('a tool author’s test suite, with startSnippetd and gitbeaker', { skip }, () => {
  let gitlab: RunningSnippetd;
  let asRoot: InstanceType<typeof Gitlab>;
  let asAlice: InstanceType<typeof Gitlab>;

  before(async () => {
    gitlab = await startSnippetd({
      seed: {
        users: [{ username: 'alice', tokens: [{ token: 'alice-token-for-my-tool-tests' }] }],
        groups: [{ path: 'acme', visibility: 'public' }],
        projects: [
          {
            path: 'acme/tools',
            visibility: 'public',
            members: [{ user: 'alice', access_level: 30 }],
            snippets: [{ title: 'hello', files: [{ path: 'hello.sh', content: 'echo hello\n' }] }],
          },
        ],
      },
    });
    asRoot = new Gitlab({ host: gitlab.url, token: gitlab.rootToken });
    asAlice = new Gitlab({ host: gitlab.url, token: 'alice-token-for-my-tool-tests' });
  });
  afterEach(() => gitlab.reset());
  after(() => gitlab.close());

  it('sees the seeded snippet', async () => {
    assert.deepEqual(gitlab.seeded?.snippets, [{ project: 'acme/tools', title: 'hello', id: 1 }]);
    const [snippet] = await asAlice.ProjectSnippets.all('acme/tools');
    assert.equal(snippet.title, 'hello');
    assert.equal(await asAlice.ProjectSnippets.showContent('acme/tools', 1), 'echo hello\n');
  });

  it('creates a snippet, which the reset after this test removes', async () => {
    const created = await asAlice.ProjectSnippets.create('acme/tools', 'mine', {
      files: [{ filePath: 'a.txt', content: 'A' }],
    });
    assert.equal(created.id, 2);
    assert.equal((await asRoot.ProjectSnippets.all('acme/tools')).length, 2);
  });

  it('starts from the seeded state again, where the next snippet gets the same id', async () => {
    assert.equal((await asRoot.ProjectSnippets.all('acme/tools')).length, 1);
    const created = await asAlice.ProjectSnippets.create('acme/tools', 'again', {
      files: [{ filePath: 'b.txt', content: 'B' }],
    });
    assert.equal(created.id, 2);
  });

  it('refuses a root token shorter than the command line takes, before starting', async () => {
    for (const rootToken of ['', 'short'])
      await assert.rejects(startSnippetd({ rootToken }), { message: 'rootToken must be at least 20 characters long' });
  });

  it('adds data for one test with seed(), answering its ids', async () => {
    const ids = await gitlab.seed({ users: [{ username: 'bob' }], projects: [{ path: 'bob/dots' }] });
    assert.deepEqual(ids, { users: { bob: 3 }, groups: {}, projects: { 'bob/dots': 2 }, snippets: [] });
    const project = await asRoot.Projects.show('bob/dots');
    assert.equal(project.id, 2);
    // A document with a problem: nothing of it kept, and the message says where.
    await assert.rejects(gitlab.seed({ users: [{ username: 'carol' }], projects: [{ path: 'nobody/x' }] }), {
      message: 'the seed document: projects[0].path names no group or user "nobody"',
    });
    assert.deepEqual(await gitlab.seed({ users: [{ username: 'carol' }] }), {
      users: { carol: 4 },
      groups: {},
      projects: {},
      snippets: [],
    });
  });
});

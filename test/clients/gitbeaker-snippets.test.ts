// A real GitLab client (@gitbeaker/rest, class ProjectSnippets) against snippetd on a real socket: create
// single- and multi-file snippets, list them following the Link header page by page, show, update with
// all four file actions in one commit, raw and file raw (nested path, at `main` and at an older commit),
// user agent details, and remove. Every call goes through the client's own methods; the client has one for
// each endpoint (all, create, edit, remove, show, showContent, showRepositoryFileContent,
// showUserAgentDetails), so gitlab.requester is not needed here.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { statusOf } from './support.ts';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

/** Records every request the client makes (URL) and the Link header of its response. */
async function recordingFetch<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; seen: { url: URL; link: string | null }[] }> {
  const seen: { url: URL; link: string | null }[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    seen.push({ url, link: res.headers.get('link') });
    return res;
  };
  try {
    return { result: await fn(), seen };
  } finally {
    globalThis.fetch = realFetch;
  }
}

/** rel -> URL of a Link header. */
function parseLink(header: string | null): Record<string, URL> {
  const out: Record<string, URL> = {};
  for (const m of (header ?? '').matchAll(/<([^>]+)>; rel="([^"]+)"/g)) out[m[2]] = new URL(m[1]);
  return out;
}

const sortedQuery = (u: URL) => [...u.searchParams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const SNIPPET_KEYS = [
  'id',
  'title',
  'description',
  'visibility',
  'author',
  'created_at',
  'updated_at',
  'project_id',
  'web_url',
  'raw_url',
  'ssh_url_to_repo',
  'http_url_to_repo',
  'file_name',
  'files',
  'imported',
  'imported_from',
];

type Snip = { id: number; files: { path: string; raw_url: string }[]; file_name: string } & Record<string, unknown>;

describe('@gitbeaker/rest ProjectSnippets against snippetd', () => {
  let t: TestApp;
  let host: string;
  let root: InstanceType<typeof Gitlab>;
  let projectId: number;
  let single: Snip;
  let multi: Snip;
  const allIds: number[] = [];

  /** git on a snippet's repository as the database holds it (this node's serving cache, brought up to date). */
  const git = async (sid: number, args: string[]) =>
    execFileSync('git', ['--git-dir', (await t.gitDir('snippet', sid))!, ...args], {
      encoding: 'utf8',
    }).trim();

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    host = `http://127.0.0.1:${port}`;
    root = new Gitlab({ host, token: ROOT_TOKEN });
    const project = await root.Projects.create({ name: 'Snip Project', path: 'snip-project' });
    projectId = project.id as number;
  });
  after(() => t.close());

  it('creates a single-file snippet', async () => {
    const s = (await root.ProjectSnippets.create(projectId, 'Single file', {
      description: 'one file',
      visibility: 'internal',
      files: [{ filePath: 'hello.rb', content: 'puts "hello"\n' }],
    })) as unknown as Snip;
    single = s;
    allIds.push(s.id);
    assert.deepEqual(Object.keys(s), SNIPPET_KEYS);
    assert.equal(s.title, 'Single file');
    assert.equal(s.description, 'one file');
    assert.equal(s.visibility, 'internal');
    assert.equal(s.project_id, projectId);
    assert.equal((s.author as { username: string }).username, 'root');
    assert.equal(s.web_url, `${host}/root/snip-project/-/snippets/${s.id}`);
    assert.equal(s.raw_url, `${host}/root/snip-project/-/snippets/${s.id}/raw`);
    assert.equal(s.http_url_to_repo, `${host}/root/snip-project/snippets/${s.id}.git`);
    assert.equal(s.ssh_url_to_repo, `git@127.0.0.1:root/snip-project/snippets/${s.id}.git`);
    assert.equal(s.file_name, 'hello.rb');
    assert.deepEqual(s.files, [
      { path: 'hello.rb', raw_url: `${host}/root/snip-project/-/snippets/${s.id}/raw/main/hello.rb` },
    ]);
    assert.equal(s.imported, false);
    assert.equal(s.imported_from, 'none');
    assert.equal(await root.ProjectSnippets.showContent(projectId, s.id), 'puts "hello"\n');
  });

  it('creates a multi-file snippet; files and file_name are in path order, not submission order', async () => {
    const s = (await root.ProjectSnippets.create(projectId, 'Many files', {
      visibility: 'private',
      files: [
        { filePath: 'b.txt', content: 'bee\n' },
        { filePath: 'dir/sub/file.rb', content: 'class Nested; end\n' },
        { filePath: 'a.md', content: '# A\n' },
      ],
    })) as unknown as Snip;
    multi = s;
    allIds.push(s.id);
    assert.equal(s.visibility, 'private');
    assert.equal(s.description, null);
    assert.equal(s.file_name, 'a.md');
    assert.deepEqual(
      s.files.map((f) => f.path),
      ['a.md', 'b.txt', 'dir/sub/file.rb'],
    );
    assert.equal(s.files[2].raw_url, `${host}/root/snip-project/-/snippets/${s.id}/raw/main/dir/sub/file.rb`);
    assert.equal(await git(s.id, ['log', '--format=%s', 'main']), 'Initial commit');
  });

  it('lists with pagination, following the Link header the way the client does', async () => {
    for (let i = 1; i <= 5; i++) {
      const s = (await root.ProjectSnippets.create(projectId, `Filler ${i}`, {
        files: [{ filePath: `f${i}.txt`, content: `filler ${i}\n` }],
      })) as unknown as Snip;
      allIds.push(s.id);
    }
    const newestFirst = [...allIds].sort((a, b) => b - a);
    assert.equal(newestFirst.length, 7);

    // perPage 2, at most 3 pages: the client fetches page 1, then follows rel="next" twice.
    const { result: limited, seen } = await recordingFetch(() =>
      root.ProjectSnippets.all(projectId, { perPage: 2, maxPages: 3 }),
    );
    assert.deepEqual(
      (limited as unknown as Snip[]).map((s) => s.id),
      newestFirst.slice(0, 6),
    );
    assert.equal(seen.length, 3, seen.map((s) => s.url.href).join('\n'));
    assert.equal(seen[0].url.pathname, `/api/v4/projects/${projectId}/snippets`);
    assert.equal(seen[0].url.searchParams.get('per_page'), '2');
    for (let i = 1; i < seen.length; i++) {
      const next = parseLink(seen[i - 1].link).next;
      assert.ok(next, `response ${i - 1} has a rel="next" link: ${seen[i - 1].link}`);
      assert.equal(next.pathname, `/api/v4/projects/${projectId}/snippets`);
      assert.deepEqual(
        sortedQuery(seen[i].url),
        sortedQuery(next),
        `request ${i} is the next link of response ${i - 1}`,
      );
      assert.equal(seen[i].url.searchParams.get('page'), String(i + 1));
    }

    // Without maxPages the client follows every next link and collects everything.
    const { result: everything, seen: seenAll } = await recordingFetch(() =>
      root.ProjectSnippets.all(projectId, { perPage: 2, showExpanded: true }),
    );
    const expanded = everything as unknown as {
      data: Snip[];
      paginationInfo: {
        total: number;
        next: number | null;
        current: number;
        previous: number | null;
        perPage: number;
        totalPages: number;
      };
    };
    assert.deepEqual(
      expanded.data.map((s) => s.id),
      newestFirst,
    );
    assert.equal(seenAll.length, 4);
    assert.equal(parseLink(seenAll[3].link).next, undefined, 'the last page has no rel="next"');
    assert.deepEqual(expanded.paginationInfo, {
      total: 7,
      next: null,
      current: 4,
      previous: 3,
      perPage: 2,
      totalPages: 4,
    });

    // One explicit page: the client does not follow links when a page is given.
    const page2 = (await root.ProjectSnippets.all(projectId, { perPage: 3, page: 2 })) as unknown as Snip[];
    assert.deepEqual(
      page2.map((s) => s.id),
      newestFirst.slice(3, 6),
    );
  });

  it('shows a snippet', async () => {
    const shown = (await root.ProjectSnippets.show(projectId, multi.id)) as unknown as Snip;
    assert.deepEqual(shown, multi);
    const missing = await statusOf(root.ProjectSnippets.show(projectId, 999999));
    assert.deepEqual(missing, { status: 404, description: '404 Not found' });
  });

  it('raw and file raw with a nested path', async () => {
    const raw = (await root.ProjectSnippets.showContent(projectId, multi.id, { showExpanded: true })) as unknown as {
      data: string;
      status: number;
      headers: Record<string, string>;
    };
    assert.equal(raw.status, 200);
    assert.equal(raw.data, '# A\n', 'raw gives the first file in path order');
    assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(raw.headers['content-disposition'], `inline; filename="a.md"; filename*=UTF-8''a.md`);
    assert.equal(raw.headers['x-content-type-options'], 'nosniff');

    const nested = (await root.ProjectSnippets.showRepositoryFileContent(
      projectId,
      multi.id,
      'main',
      'dir/sub/file.rb',
      { showExpanded: true },
    )) as unknown as {
      data: string;
      headers: Record<string, string>;
    };
    assert.equal(nested.data, 'class Nested; end\n');
    assert.equal(nested.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(nested.headers['content-disposition'], `inline; filename="file.rb"; filename*=UTF-8''file.rb`);
    assert.equal(await root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'HEAD', 'b.txt'), 'bee\n');

    assert.deepEqual(
      await statusOf(root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', 'dir/sub/nope.rb')),
      {
        status: 404,
        description: '404 File Not Found',
      },
    );
    assert.deepEqual(
      await statusOf(root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'no-such-branch', 'a.md')),
      {
        status: 404,
        description: '404 Reference Not Found',
      },
    );
    assert.deepEqual(
      await statusOf(root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', '../../etc/passwd')),
      {
        status: 400,
        description: 'file_path should be a valid file path',
      },
    );
  });

  it('updates with all four file actions in one commit', async () => {
    const initialCommit = await git(multi.id, ['rev-parse', 'main']);
    const edited = (await root.ProjectSnippets.edit(projectId, multi.id, {
      files: [
        { action: 'create', filePath: 'new.txt', content: 'brand new\n' },
        { action: 'update', filePath: 'b.txt', content: 'bee updated\n' },
        { action: 'delete', filePath: 'a.md' },
        { action: 'move', previousPath: 'dir/sub/file.rb', filePath: 'lib/deep/er/moved.rb' },
      ],
    })) as unknown as Snip;
    assert.deepEqual(
      edited.files.map((f) => f.path),
      ['b.txt', 'lib/deep/er/moved.rb', 'new.txt'],
    );
    assert.equal(edited.file_name, 'b.txt');
    assert.equal(edited.title, 'Many files');

    assert.equal(await root.ProjectSnippets.showContent(projectId, multi.id), 'bee updated\n');
    assert.equal(
      await root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', 'new.txt'),
      'brand new\n',
    );
    assert.equal(
      await root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', 'lib/deep/er/moved.rb'),
      'class Nested; end\n',
      'move keeps the content',
    );
    assert.deepEqual(
      await statusOf(root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', 'a.md')),
      { status: 404, description: '404 File Not Found' },
    );
    assert.deepEqual(
      await statusOf(root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, 'main', 'dir/sub/file.rb')),
      {
        status: 404,
        description: '404 File Not Found',
      },
    );

    // Exactly one new commit; the old version stays reachable by full and abbreviated SHA.
    assert.equal(await git(multi.id, ['log', '--format=%s', 'main']), 'Update snippet\nInitial commit');
    assert.equal(
      await root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, initialCommit, 'dir/sub/file.rb'),
      'class Nested; end\n',
    );
    assert.equal(
      await root.ProjectSnippets.showRepositoryFileContent(projectId, multi.id, initialCommit.slice(0, 8), 'a.md'),
      '# A\n',
    );
    assert.equal(await git(multi.id, ['ls-tree', '-r', '--name-only', 'main']), 'b.txt\nlib/deep/er/moved.rb\nnew.txt');
    await git(multi.id, ['fsck', '--strict']);

    // An invalid action is refused as a whole (422) and nothing changes.
    const bad = await statusOf(
      root.ProjectSnippets.edit(projectId, multi.id, {
        files: [
          { action: 'create', filePath: 'x.txt', content: 'x' },
          { action: 'update', filePath: 'b.txt' },
        ],
      }),
    );
    assert.deepEqual(bad, { status: 422, description: '{"error":"Snippet actions have invalid data"}' });
    const after = (await root.ProjectSnippets.show(projectId, multi.id)) as unknown as Snip;
    assert.deepEqual(
      after.files.map((f) => f.path),
      ['b.txt', 'lib/deep/er/moved.rb', 'new.txt'],
    );
    assert.equal(await git(multi.id, ['rev-list', '--count', 'main']), '2');
  });

  it('user agent details (admin)', async () => {
    const detail = await root.ProjectSnippets.showUserAgentDetails(projectId, single.id);
    assert.deepEqual(detail, { user_agent: 'node', ip_address: '127.0.0.1', akismet_submitted: false });
  });

  it('removes a snippet and its repository', async () => {
    assert.ok(await t.app.store.git.find('snippet', single.id));
    await root.ProjectSnippets.remove(projectId, single.id);
    assert.deepEqual(await statusOf(root.ProjectSnippets.show(projectId, single.id)), {
      status: 404,
      description: '404 Not found',
    });
    assert.deepEqual(await statusOf(root.ProjectSnippets.showContent(projectId, single.id)), {
      status: 404,
      description: '404 Snippet Not Found',
    });
    assert.deepEqual(await statusOf(root.ProjectSnippets.remove(projectId, single.id)), {
      status: 404,
      description: '404 Snippet Not Found',
    });
    assert.equal(await t.app.store.git.find('snippet', single.id), null);
    const rest = (await root.ProjectSnippets.all(projectId, { perPage: 100 })) as unknown as Snip[];
    assert.ok(!rest.some((s) => s.id === single.id));
    assert.equal(rest.length, 6);
  });
});

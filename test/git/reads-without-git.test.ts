// Reads never run git: a file at a branch, a tag (lightweight or annotated, pushed) or a commit, a tree, a commit list, a snippet and its pages
// are row lookups. The server runs with a `git` first on its PATH that writes down every time it is run and
// then runs the real one; the reads must leave that record as they found it, and a clone must add to it
// (or the record would prove nothing).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processStorage, runGit } from '../helper.ts';
import { CLI, exited, spawnServer, type Spawned } from '../../scripts/spawn-server.ts';

const TOKEN = 'reads-without-git-root-token-0123';

describe('reads never run git', () => {
  let dir: string;
  let storage: Awaited<ReturnType<typeof processStorage>>;
  let server: Spawned;
  let record: string;
  const runs = () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : []);
  const api = async (method: string, url: string, body?: object) => {
    const res = await fetch(`${server.url}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      text,
      json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null,
    };
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-reads-without-git-'));
    record = path.join(dir, 'git-runs');
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> ${record}\nexec ${realGit} "$@"\n`, {
      mode: 0o755,
    });
    storage = await processStorage('snippetd-reads-without-git-data-');
    server = await spawnServer(
      {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        SNIPPETD_DATA_DIR: storage.dataDir,
        SNIPPETD_DATABASE_URL: storage.databaseUrl,
        SNIPPETD_INITIAL_ROOT_TOKEN: TOKEN,
        SNIPPETD_LOG_LEVEL: 'warn',
      },
      [CLI, 'serve', '--port', '0'],
    );
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    if (server) await exited(server.child);
    await storage?.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('files at a branch, a tag and a commit, trees, commits, snippets and pages: no git; a clone: git', async () => {
    assert.deepEqual(runs(), ['--version'], 'the start-up check runs git once');
    const project = (await api('POST', '/projects', { path: 'reads', visibility: 'public' })).json;
    const file = `/projects/${project.id}/repository/files/README.md`;
    await api('POST', file, { branch: 'main', content: 'first\n', commit_message: 'first' });
    await api('PUT', file, { branch: 'main', content: 'second\n', commit_message: 'second' });
    const snippet = (
      await api('POST', `/projects/${project.id}/snippets`, {
        title: 'reads',
        visibility: 'public',
        files: [{ file_path: 'a.rb', content: 'puts 1\n' }],
      })
    ).json;
    await api('PUT', `/projects/${project.id}/snippets/${snippet.id}`, {
      files: [{ action: 'update', file_path: 'a.rb', content: 'puts 2\n' }],
    });
    const work = path.join(dir, 'work');
    const remote = `${server.url.replace('://', `://root:${TOKEN}@`)}/root/reads.git`;
    assert.equal((await runGit(['clone', '-q', remote, work])).code, 0);
    // Tags, pushed (this runs git on the server, before the reads are counted): a lightweight one and an
    // annotated one, whose tag object is stored as a row like any other object.
    assert.equal((await runGit(['tag', 'v1', 'HEAD~1'], work)).code, 0);
    assert.equal((await runGit(['tag', '-a', 'v2', '-m', 'the second'], work)).code, 0);
    assert.equal((await runGit(['push', '-q', 'origin', 'v1', 'v2'], work)).code, 0);
    const firstCommit = (await runGit(['rev-parse', 'HEAD~1'], work)).stdout.trim();
    const snippetFirst = (await api('GET', `/projects/${project.id}/snippets/${snippet.id}`)).json;
    const before = runs().length;

    const reads: [string, string][] = [
      [`${file}/raw?ref=main`, 'second\n'],
      [`${file}/raw?ref=v1`, 'first\n'],
      [`${file}/raw?ref=v2`, 'second\n'],
      [`${file}/raw?ref=${firstCommit}`, 'first\n'],
      [`/projects/${project.id}/snippets/${snippet.id}/raw`, 'puts 2\n'],
      [`/projects/${project.id}/snippets/${snippet.id}/files/main/a.rb/raw`, 'puts 2\n'],
    ];
    for (const [url, expected] of reads) {
      const res = await api('GET', url);
      assert.equal(res.status, 200, url);
      assert.equal(res.text, expected, url);
    }
    for (const url of [
      `${file}?ref=v1`,
      `/projects/${project.id}/repository/tree?ref=v1`,
      `/projects/${project.id}/repository/commits?ref_name=main`,
      `/projects/${project.id}/snippets/${snippet.id}`,
      `/projects/${project.id}/snippets`,
    ])
      assert.equal((await api('GET', url)).status, 200, url);
    for (const url of [snippetFirst.web_url, snippetFirst.raw_url, `${server.url}/root/reads`])
      assert.equal((await fetch(url)).status, 200, url);
    assert.deepEqual(runs().slice(before), [], 'a read ran git');

    assert.equal(
      (
        await runGit([
          'clone',
          '-q',
          snippetFirst.http_url_to_repo.replace('://', `://root:${TOKEN}@`),
          path.join(dir, 'clone'),
        ])
      ).code,
      0,
    );
    assert.ok(runs().length > before, 'a clone runs git, through the recording one');

    // A fresh clone of the project has both tags as they were pushed, the annotated one a tag object.
    const fresh = path.join(dir, 'fresh');
    assert.equal((await runGit(['clone', '-q', remote, fresh])).code, 0);
    assert.equal((await runGit(['tag', '-l'], fresh)).stdout, 'v1\nv2\n');
    assert.equal((await runGit(['cat-file', '-t', 'v2'], fresh)).stdout, 'tag\n');
    assert.equal((await runGit(['cat-file', '-t', 'v1'], fresh)).stdout, 'commit\n');
    assert.equal((await runGit(['fsck', '--strict'], fresh)).code, 0);
  });
});

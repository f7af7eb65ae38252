// `snippetd fsck [--repair]` on a real process against a test app's database: healthy instance -> 0
// problems, exit 0; a snippet's branch moved behind its index of files (git plumbing, imported into the rows
// alone) -> the difference is listed, exit 1; --repair brings the index in line, the API shows the branch's
// files, and fsck is clean again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helper.ts';

const CLI = path.resolve('src/cli.ts');
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'snippetd-fsck-home-'));
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Intruder',
  GIT_AUTHOR_EMAIL: 'intruder@example.com',
  GIT_COMMITTER_NAME: 'Intruder',
  GIT_COMMITTER_EMAIL: 'intruder@example.com',
};

/** Plumbing on a bare repository (no server involved, so synchronous is fine). */
function git(gitDir: string, args: string[], input?: string): string {
  const r = spawnSync('git', ['--git-dir', gitDir, ...args], {
    env: GIT_ENV,
    input,
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Runs `snippetd fsck` as its own process (its own database connection). */
function fsckCli(t: TestApp, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    SNIPPETD_DATA_DIR: t.config.dataDir,
    SNIPPETD_DATABASE_URL: t.config.databaseUrl,
    SNIPPETD_LOG_LEVEL: 'warn',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'fsck', ...args], { env, timeout: 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const summary = (out: string) =>
  /snippetd fsck: (\d+) repositories checked, (\d+) problems, (\d+) snippets repaired/.exec(out);

describe('snippetd fsck', () => {
  let t: TestApp;
  let projectId: number;
  let snippet: any;
  let other: any;
  let repo: string;
  let oldHead: string;
  let newHead: string;

  before(async () => {
    t = await createTestApp();
    const project = await t.request({
      method: 'POST',
      url: '/api/v4/projects',
      payload: { name: 'fsckp', visibility: 'public', initialize_with_readme: true },
    });
    assert.equal(project.statusCode, 201, project.body);
    projectId = project.json.id;
    const create = (title: string, files: { file_path: string; content: string }[]) =>
      t.api('POST', `/projects/${projectId}/snippets`, ROOT_TOKEN, { title, visibility: 'public', files });
    const s1 = await create('diverging', [
      { file_path: 'keep.txt', content: 'kept\n' },
      { file_path: 'change.txt', content: 'before\n' },
      { file_path: 'gone.txt', content: 'to be removed\n' },
    ]);
    assert.equal(s1.statusCode, 201, s1.body);
    snippet = s1.json;
    const s2 = await create('bystander', [{ file_path: 'x.txt', content: 'x\n' }]);
    assert.equal(s2.statusCode, 201, s2.body);
    other = s2.json;
    repo = (await t.gitDir('snippet', snippet.id))!;
  });

  after(async () => {
    await t?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('reports 0 problems and exits 0 on a healthy instance', async () => {
    const r = await fsckCli(t);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const m = summary(r.stdout);
    assert.ok(m, r.stdout);
    assert.equal(Number(m[1]), 3, 'one project and two snippet repositories');
    assert.equal(Number(m[2]), 0, r.stdout);
    assert.equal(Number(m[3]), 0);
    assert.equal(r.stdout.trim().split('\n').length, 1, `only the summary line:\n${r.stdout}`);
  });

  it('lists the differences of a repository committed to behind the database and exits 1', async () => {
    oldHead = git(repo, ['rev-parse', '--verify', 'refs/heads/main']);
    const keep = git(repo, ['rev-parse', `${oldHead}:keep.txt`]);
    const changed = git(repo, ['hash-object', '-w', '--stdin'], 'after\n');
    const added = git(repo, ['hash-object', '-w', '--stdin'], 'brand new\n');
    const tree = git(
      repo,
      ['mktree'],
      `100644 blob ${added}\tadded.txt\n100644 blob ${changed}\tchange.txt\n100644 blob ${keep}\tkeep.txt\n`,
    );
    newHead = git(repo, ['commit-tree', tree, '-p', oldHead, '-m', 'behind the database']);
    git(repo, ['update-ref', 'refs/heads/main', newHead, oldHead]);
    // Into the rows, leaving the snippet's index of files behind: what a crash between the two used to leave.
    await t.importGitDir('snippet', snippet.id);

    const r = await fsckCli(t);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    const mine = lines.filter((l) => l.startsWith(`snippet ${snippet.id}: `));
    assert.ok(
      mine.some((l) => l.includes(`head is ${newHead}`) && l.includes(`database says ${oldHead}`)),
      r.stdout,
    );
    assert.ok(
      mine.some((l) => l.startsWith(`snippet ${snippet.id}: change.txt: repository ${changed.slice(0, 12)}`)),
      r.stdout,
    );
    assert.ok(
      mine.some((l) =>
        l.startsWith(`snippet ${snippet.id}: added.txt: repository ${added.slice(0, 12)}, database missing`),
      ),
      r.stdout,
    );
    assert.ok(
      mine.some((l) => l === `snippet ${snippet.id}: gone.txt: only in the database`),
      r.stdout,
    );
    assert.ok(!mine.some((l) => l.includes('keep.txt')), r.stdout);
    assert.ok(!lines.some((l) => l.startsWith(`snippet ${other.id}:`) || l.startsWith('project ')), r.stdout);
    const m = summary(r.stdout);
    assert.ok(m, r.stdout);
    assert.equal(Number(m[2]), mine.length);
    assert.equal(Number(m[3]), 0);

    // Until repaired, the API still answers from the (stale) mirror: fsck only reports.
    const get = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${snippet.id}` });
    assert.deepEqual(get.json.files.map((f: any) => f.path).sort(), ['change.txt', 'gone.txt', 'keep.txt']);
  });

  it('--repair mirrors the repository head; the API shows it and a second fsck is clean', async () => {
    const before = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${snippet.id}` });
    const r = await fsckCli(t, ['--repair']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const m = summary(r.stdout);
    assert.ok(m, r.stdout);
    assert.equal(Number(m[3]), 1, r.stdout);
    assert.ok(r.stdout.includes(`snippet ${snippet.id}: head is ${newHead}`), r.stdout);

    const get = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${snippet.id}` });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(get.json.files.map((f: any) => f.path).sort(), ['added.txt', 'change.txt', 'keep.txt']);
    assert.ok(['added.txt', 'change.txt', 'keep.txt'].includes(get.json.file_name), get.json.file_name);
    assert.ok(Date.parse(get.json.updated_at) >= Date.parse(before.json.updated_at));
    const raw = (file: string) =>
      t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${snippet.id}/files/main/${file}/raw` });
    assert.equal((await raw('change.txt')).body, 'after\n');
    assert.equal((await raw('added.txt')).body, 'brand new\n');
    assert.equal((await raw('keep.txt')).body, 'kept\n');
    const main = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${snippet.id}/raw` });
    assert.equal(main.statusCode, 200);
    assert.equal(
      main.body,
      { 'added.txt': 'brand new\n', 'change.txt': 'after\n', 'keep.txt': 'kept\n' }[get.json.file_name as string],
    );
    const otherGet = await t.request({ method: 'GET', url: `/api/v4/projects/${projectId}/snippets/${other.id}/raw` });
    assert.equal(otherGet.body, 'x\n');

    const again = await fsckCli(t);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const m2 = summary(again.stdout);
    assert.ok(m2, again.stdout);
    assert.equal(Number(m2[2]), 0, again.stdout);
    assert.equal(Number(m2[3]), 0);
    assert.equal(git(repo, ['rev-parse', 'refs/heads/main']), newHead, 'repair never moves the repository');
  });
});

// `snippetd fsck [--repair]` on a real process against a test app's database: healthy instance -> 0
// problems, exit 0; a snippet's branch moved behind its index of files (git plumbing, imported into the rows
// alone) -> the difference is listed, exit 1; --repair brings the index in line, the API shows the branch's
// files, and fsck is clean again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import { createTestApp, ROOT_TOKEN, TEST_DB, type TestApp, untilSearchIndexed } from '../helper.ts';
import { cliCommand } from '../../scripts/spawn-server.ts';

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
    const child = spawn(...cliCommand('fsck', ...args), { env, timeout: 30_000 });
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

  it('lists a ref whose name git refuses (an earlier version stored one pushed raw) and exits 1', async () => {
    const main = await t.app.store.kysely
      .selectFrom('git_refs')
      .innerJoin('git_repositories', 'git_repositories.id', 'git_refs.repository_id')
      .select(['git_refs.repository_id', 'git_refs.oid'])
      .where('git_repositories.kind', '=', 'project')
      .where('git_refs.name', '=', 'refs/heads/main')
      .executeTakeFirstOrThrow();
    const bad = { repository_id: main.repository_id, name: 'refs/heads/a..b', oid: main.oid };
    await t.app.store.kysely.insertInto('git_refs').values(bad).execute();
    try {
      const r = await fsckCli(t);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `^project ${projectId}: "refs/heads/a\\.\\.b": not a ref name git accepts: every push to this repository fails$`,
          'm',
        ),
      );
      assert.equal(Number(summary(r.stdout)?.[2]), 1, r.stdout);
    } finally {
      await t.app.store.kysely.deleteFrom('git_refs').where('name', '=', bad.name).execute();
    }
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

// The search index against the rows: files of a snippet whose rows in snippet_file_text were changed,
// removed or added behind the application's back, a file whose text the limit in force now excludes, and on
// SQLite the full-text index's pieces (one deleted, one of a snippet that does not exist): each listed, exit 1;
// --repair makes search answer from the files again, and fsck is clean.
describe('snippetd fsck: the search index', () => {
  let t: TestApp;
  let snippet: any;
  const db = () => t.app.store.kysely;
  /** SQLite's indexer off the write: until its queue is empty; PostgreSQL indexes in the write. */
  const indexed = () => (TEST_DB === 'sqlite' ? untilSearchIndexed(db()) : Promise.resolve());
  const titles = async (term: string) =>
    (await t.ok('GET', `/search?scope=snippet_blobs&search=${term}`, ROOT_TOKEN, undefined, 200))
      .map((s: any) => s.title)
      .sort();
  const fileRowId = async (path: string) =>
    (
      await db()
        .selectFrom('snippet_file_text')
        .select('id')
        .where('snippet_id', '=', snippet.id)
        .where('path', '=', path)
        .executeTakeFirstOrThrow()
    ).id;

  before(async () => {
    t = await createTestApp();
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_rate_limit: 0 });
    snippet = await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      {
        title: 'indexed',
        visibility: 'public',
        files: [
          { file_path: 'big.txt', content: `${'big '.repeat(600)}kumquat\n` },
          { file_path: 'gone.txt', content: 'a tamarillo\n' },
          { file_path: 'same.txt', content: 'a jabuticaba\n' },
          { file_path: 'tampered.txt', content: 'a cherimoya\n' },
        ],
      },
      201,
    );
    await t.ok(
      'POST',
      '/snippets',
      ROOT_TOKEN,
      { title: 'bystander', visibility: 'public', files: [{ file_path: 'b.txt', content: 'a pitaya\n' }] },
      201,
    );
    await indexed();
  });

  after(() => t?.close());

  it('finds nothing to say of a healthy index', async () => {
    const r = await fsckCli(t);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(Number(summary(r.stdout)?.[2]), 0, r.stdout);
  });

  it('lists each difference of the index from the rows and the limit in force, and exits 1', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 2 });
    await sql`UPDATE snippet_file_text SET content = 'a durian' WHERE id = ${await fileRowId('tampered.txt')}`.execute(
      db(),
    );
    await sql`DELETE FROM snippet_file_text WHERE id = ${await fileRowId('gone.txt')}`.execute(db());
    await sql`INSERT INTO snippet_file_text (snippet_id, path, content)
      VALUES (${snippet.id}, 'ghost.txt', 'a ghostly mangosteen')`.execute(db());
    await indexed();
    if (TEST_DB === 'sqlite') {
      // One piece of a file's full-text index gone, and pieces of a snippet that never was.
      // Piece 0 of a source is at the source's id (search-indexing.ts#pieceRowid).
      await sql`DELETE FROM snippet_file_text_fts WHERE rowid = ${await fileRowId('same.txt')}`.execute(db());
      await sql`INSERT INTO snippet_fields_fts (rowid, title, description, file_name)
        VALUES (${999_999}, 'a phantom', '', 'p.txt')`.execute(db());
    }
    // The index as it stands answers wrongly.
    assert.deepEqual(await titles('durian'), ['indexed']);
    assert.deepEqual(await titles('mangosteen'), ['indexed']);
    assert.deepEqual(await titles('tamarillo'), []);
    assert.deepEqual(await titles('kumquat'), ['indexed']);

    const r = await fsckCli(t);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    const expected = [
      `snippet ${snippet.id}: big.txt: its text is in the search index, over the limit of 2 KiB`,
      `snippet ${snippet.id}: tampered.txt: the search index holds other text than the file`,
      `snippet ${snippet.id}: ghost.txt: in the search index, not a file of the snippet`,
      `snippet ${snippet.id}: gone.txt: not in the search index`,
    ];
    if (TEST_DB === 'sqlite')
      expected.push(
        `snippet ${snippet.id}: same.txt: full-text index: missing pieces 0 of 1`,
        'search index: full-text entries of a snippet gone (fields 999999)',
      );
    for (const line of expected) assert.ok(lines.includes(line), `${line}\n${r.stdout}`);
    assert.equal(Number(summary(r.stdout)?.[2]), expected.length, r.stdout);
    assert.equal(lines.length, expected.length + 1, r.stdout);
  });

  it('--repair makes the index say what the files hold under the limit in force; fsck is clean again', async () => {
    const r = await fsckCli(t, ['--repair']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(Number(summary(r.stdout)?.[3]), 1, r.stdout);
    await indexed();
    assert.deepEqual(await titles('durian'), []);
    assert.deepEqual(await titles('mangosteen'), []);
    assert.deepEqual(await titles('cherimoya'), ['indexed']);
    assert.deepEqual(await titles('tamarillo'), ['indexed']);
    assert.deepEqual(await titles('jabuticaba'), ['indexed']);
    assert.deepEqual(await titles('kumquat'), [], 'over the limit now: found by its path only');
    assert.deepEqual(await titles('big.txt'), ['indexed']);
    assert.deepEqual(await titles('pitaya'), ['bystander']);
    if (TEST_DB === 'sqlite') {
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM snippet_fields_fts_docsize
        WHERE id = ${999_999}`.execute(db());
      assert.equal(Number(rows[0].n), 0);
    }

    const again = await fsckCli(t);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(Number(summary(again.stdout)?.[2]), 0, again.stdout);
  });

  it('after the limit is raised, lists the files whose text it now takes, and --repair indexes them', async () => {
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 1024 });
    const r = await fsckCli(t);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').slice(0, -1), [
      `snippet ${snippet.id}: big.txt: its text is not in the search index`,
    ]);
    assert.equal((await fsckCli(t, ['--repair'])).code, 0);
    await indexed();
    assert.deepEqual(await titles('kumquat'), ['indexed']);
    assert.equal((await fsckCli(t)).code, 0);
  });
});

// Damage fsck must report without making it worse (helper-77): a file's blob gone or damaged, where the search
// index holds the only copy of its text (--repair replaced that text with '' or the damaged bytes); a large
// object's part gone (fsck stopped at "unexpected end of file" naming nothing); a file's index row gone while
// its text row stayed (--repair failed on the text row's unique key and repaired nothing).
describe('snippetd fsck on damaged rows', () => {
  let t: TestApp;
  const db = () => t.app.store.kysely;
  const text = async (snippetId: number, path: string) =>
    (
      await db()
        .selectFrom('snippet_file_text')
        .select('content')
        .where('snippet_id', '=', snippetId)
        .where('path', '=', path)
        .executeTakeFirst()
    )?.content;
  const blobOf = async (snippetId: number, path: string) =>
    (
      await db()
        .selectFrom('snippet_files')
        .select('blob_id')
        .where('snippet_id', '=', snippetId)
        .where('path', '=', path)
        .executeTakeFirstOrThrow()
    ).blob_id;
  const objectRow = async (snippetId: number, blobId: string) =>
    db()
      .selectFrom('git_objects as o')
      .innerJoin('git_repositories as r', 'r.id', 'o.repository_id')
      .select(['o.repository_id', 'o.oid', 'o.parts'])
      .where('r.kind', '=', 'snippet')
      .where('r.owner_id', '=', snippetId)
      .where('o.oid', '=', Buffer.from(blobId, 'hex'))
      .executeTakeFirstOrThrow();
  const create = (title: string, files: { file_path: string; content: string }[]) =>
    t.ok('POST', '/snippets', ROOT_TOKEN, { title, visibility: 'public', files }, 201);

  before(async () => {
    t = await createTestApp();
  });
  after(() => t?.close());

  it("a blob gone or damaged: reported, and --repair keeps the search index's text of it", async () => {
    const lost = await create('lost', [{ file_path: 'only.txt', content: 'the only copy\n' }]);
    const bent = await create('bent', [{ file_path: 'bent.txt', content: 'the right text\n' }]);
    const bare = await create('bare', [{ file_path: 'bare.txt', content: 'no copy left\n' }]);
    if (TEST_DB === 'sqlite') await untilSearchIndexed(db());
    const lostBlob = await blobOf(lost.id, 'only.txt');
    const bentBlob = await blobOf(bent.id, 'bent.txt');
    const lostRow = await objectRow(lost.id, lostBlob);
    await db()
      .deleteFrom('git_objects')
      .where('repository_id', '=', lostRow.repository_id)
      .where('oid', '=', lostRow.oid)
      .execute();
    const bareBlob = await blobOf(bare.id, 'bare.txt');
    const bareRow = await objectRow(bare.id, bareBlob);
    await db()
      .deleteFrom('git_objects')
      .where('repository_id', '=', bareRow.repository_id)
      .where('oid', '=', bareRow.oid)
      .execute();
    await db().deleteFrom('snippet_file_text').where('snippet_id', '=', bare.id).execute();
    const bentRow = await objectRow(bent.id, bentBlob);
    await db()
      .updateTable('git_objects')
      .set({ data: zlib.deflateSync('abc') })
      .where('repository_id', '=', bentRow.repository_id)
      .where('oid', '=', bentRow.oid)
      .execute();
    for (const args of [[], ['--repair'], []]) {
      const r = await fsckCli(t, args);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.ok(
        lines.includes(
          `snippet ${lost.id}: only.txt: its blob ${lostBlob} is missing or damaged; its text in the search index is kept, and is that blob exactly`,
        ),
        r.stdout,
      );
      assert.ok(
        lines.includes(
          `snippet ${bent.id}: bent.txt: its blob ${bentBlob} is missing or damaged; its text in the search index is kept, and is that blob exactly`,
        ),
        r.stdout,
      );
      assert.ok(
        lines.includes(
          `snippet ${bare.id}: bare.txt: its blob ${bareBlob} is missing or damaged; the search index has no text of it`,
        ),
        r.stdout,
      );
      assert.equal(Number(summary(r.stdout)?.[3]), 0, 'nothing was repaired');
      assert.equal(await text(lost.id, 'only.txt'), 'the only copy\n');
      assert.equal(await text(bent.id, 'bent.txt'), 'the right text\n');
    }
  });

  it("a large object's part gone: reported with its object, and every snippet is still checked", async () => {
    // Stored as parts (a file over 1 MiB), and under the search index's limit: its check reads it too.
    await t.must('PUT', '/application/settings', ROOT_TOKEN, { search_indexed_file_size_limit_kb: 2048 });
    const large = await create('large', [
      { file_path: 'large.txt', content: crypto.randomBytes(800_000).toString('base64') },
    ]);
    const after = await create('after', [{ file_path: 'a.txt', content: 'a\n' }]);
    if (TEST_DB === 'sqlite') await untilSearchIndexed(db());
    const blob = await blobOf(large.id, 'large.txt');
    const row = await objectRow(large.id, blob);
    assert.ok(row.parts !== null, 'stored as parts');
    await db().deleteFrom('git_object_parts').where('upload_id', '=', row.parts!).where('seq', '=', 1).execute();
    const r = await fsckCli(t);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`snippet ${large.id}: object ${blob}: cannot be inflated\n`), r.stdout);
    assert.ok(
      r.stdout.includes(
        `snippet ${large.id}: large.txt: its blob ${blob} is missing or damaged; its text in the search index is kept, and is that blob exactly\n`,
      ),
      r.stdout,
    );
    assert.ok(!r.stdout.includes(`snippet ${after.id}:`), r.stdout);
    assert.equal(Number(summary(r.stdout)?.[1]), 5, `every repository checked:\n${r.stdout}`);
  });

  it("a file's index row gone, its text row left: --repair writes the index row again", async () => {
    const s = await create('indexed', [
      { file_path: 'x.txt', content: 'x\n' },
      { file_path: 'y.txt', content: 'y\n' },
      { file_path: 'z.txt', content: 'z, the only copy\n' },
    ]);
    if (TEST_DB === 'sqlite') await untilSearchIndexed(db());
    // z.txt's blob is gone too: its text row is the only copy, which --repair must keep.
    const zBlob = await blobOf(s.id, 'z.txt');
    const zRow = await objectRow(s.id, zBlob);
    await db()
      .deleteFrom('git_objects')
      .where('repository_id', '=', zRow.repository_id)
      .where('oid', '=', zRow.oid)
      .execute();
    await db()
      .deleteFrom('snippet_files')
      .where('snippet_id', '=', s.id)
      .where('path', 'in', ['y.txt', 'z.txt'])
      .execute();
    const r = await fsckCli(t, ['--repair']);
    assert.ok(r.stdout.includes(`snippet ${s.id}: y.txt: repository`), r.stdout + r.stderr);
    assert.ok(summary(r.stdout), r.stdout + r.stderr);
    // z.txt's blob is still gone: a repair that leaves a problem exits 1, as git fsck does while one is there.
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /snippetd fsck: \d+ problems? (is|are) left after the repair\n/);
    const files = await t.ok('GET', `/snippets/${s.id}`, ROOT_TOKEN, undefined, 200);
    assert.deepEqual(
      files.files.map((f: { path: string }) => f.path),
      ['x.txt', 'y.txt', 'z.txt'],
    );
    assert.equal(await text(s.id, 'y.txt'), 'y\n');
    assert.equal(await text(s.id, 'z.txt'), 'z, the only copy\n');
  });
});

// The data directory of an earlier version: one bare repository per project and per snippet under
// repositories/, and a database without git rows. `snippetd serve` refuses to start on it with one line;
// `snippetd migrate` imports every repository, says how many, and renames the directory; a second run is
// harmless, and so is a run over the same repositories again (an interrupted import is simply run again);
// an object that does not hash to its id stops it, with the repositories before it imported and kept;
// then the server serves every snippet and the project's files exactly as before, and `snippetd fsck` is clean.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createTestApp, processStorage, ROOT_TOKEN, TEST_DB, type TestApp } from '../helper.ts';
import { exited, spawnServer, cliCommand } from '../../scripts/spawn-server.ts';
import { openDatabase } from '../../src/storage/db/database.ts';

const headers = { 'PRIVATE-TOKEN': ROOT_TOKEN };
const LEGACY_LINE =
  'snippetd: the data directory holds repositories of an earlier version; run `snippetd migrate` to move them into the database\n';

const git = (args: string[], input?: string) => {
  const r = spawnSync('git', args, {
    input,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Old',
      GIT_AUTHOR_EMAIL: 'old@example.com',
      GIT_COMMITTER_NAME: 'Old',
      GIT_COMMITTER_EMAIL: 'old@example.com',
    },
  });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Every absolute URL the API handed out, with its scheme and host replaced: the two servers have different ones. */
const hostless = (value: unknown) =>
  JSON.parse(
    JSON.stringify(value)
      .replace(/http:\/\/[^/"]+/g, 'BASE')
      .replace(/git@[^:"]+:/g, 'git@HOST:'),
  );

interface Before {
  project: any;
  fileJson: any;
  snippets: {
    id: number;
    json: any;
    raw: Record<string, string>;
    commits: string[];
    firstFiles: Record<string, string>;
  }[];
}

/** Makes the database look like one of an earlier version: no git rows at all (migration 0005 made them). */
async function asBeforeGitRows(databaseUrl: string, more?: (db: ReturnType<typeof openDatabase>) => Promise<unknown>) {
  const db = openDatabase(databaseUrl);
  try {
    for (const table of ['git_objects', 'git_refs', 'git_repositories'] as const)
      await db.kysely.deleteFrom(table).execute();
    // Migration 0010 wrote the search index's text of each file from its repository's rows, which such a
    // database did not have yet: every text is empty.
    await db.kysely.updateTable('snippet_file_text').set({ content: '' }).execute();
    await more?.(db);
  } finally {
    await db.close();
  }
}

describe('importing the repositories of an earlier version', () => {
  let dataDir: string;
  let databaseUrl: string;
  let remove: () => Promise<void>;
  const env = () => ({
    ...process.env,
    SNIPPETD_DATA_DIR: dataDir,
    SNIPPETD_DATABASE_URL: databaseUrl,
    SNIPPETD_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    SNIPPETD_LOG_LEVEL: 'warn',
  });
  const cli = (...args: string[]) =>
    spawnSync(...cliCommand(...args), { env: env(), encoding: 'utf8', timeout: 60_000 });
  const legacyDir = () => path.join(dataDir, 'repositories');
  const importedDirs = () => fs.readdirSync(dataDir).filter((name) => name.startsWith('repositories.imported-'));

  const state: Before = { project: null, fileJson: null, snippets: [] };
  let objects = 0;

  before(async () => {
    ({ dataDir, databaseUrl, remove } = await processStorage('snippetd-legacy-'));
    // The app writes into our data directory and database; its own temporary ones stay unused.
    const t: TestApp = await createTestApp({ dataDir, databaseUrl });
    try {
      const project = await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'old', visibility: 'private' }, 201);
      await t.ok(
        'POST',
        `/projects/${project.id}/repository/files/docs%2FREADME.md`,
        ROOT_TOKEN,
        { branch: 'main', content: '# Old project\n', commit_message: 'Add README' },
        201,
      );
      state.project = await t.ok('GET', `/projects/${project.id}`, ROOT_TOKEN, undefined, 200);
      state.fileJson = await t.ok(
        'GET',
        `/projects/${project.id}/repository/files/docs%2FREADME.md?ref=main`,
        ROOT_TOKEN,
        undefined,
        200,
      );
      const one = await t.ok(
        'POST',
        `/projects/${project.id}/snippets`,
        ROOT_TOKEN,
        { title: 'one', files: [{ file_path: 'one.txt', content: 'first\n' }] },
        201,
      );
      const two = await t.ok(
        'POST',
        `/projects/${project.id}/snippets`,
        ROOT_TOKEN,
        {
          title: 'two',
          visibility: 'public',
          files: [
            { file_path: 'a.rb', content: 'puts 1\n' },
            { file_path: 'lib/b.rb', content: 'b = 1\n' },
          ],
        },
        201,
      );
      await t.ok(
        'PUT',
        `/projects/${project.id}/snippets/${two.id}`,
        ROOT_TOKEN,
        {
          files: [
            { action: 'update', file_path: 'a.rb', content: 'puts 2\n' },
            { action: 'create', file_path: 'c.rb', content: 'c = 3\n' },
          ],
        },
        200,
      );
      const firstFiles: Record<string, string>[] = [
        { 'one.txt': 'first\n' },
        { 'a.rb': 'puts 1\n', 'lib/b.rb': 'b = 1\n' },
      ];
      for (const [i, { id }] of [one, two].entries()) {
        const json = await t.ok('GET', `/projects/${project.id}/snippets/${id}`, ROOT_TOKEN, undefined, 200);
        const raw: Record<string, string> = {};
        for (const f of json.files as { path: string }[])
          raw[f.path] = (
            await t.expect(
              'GET',
              `/projects/${project.id}/snippets/${id}/files/main/${encodeURIComponent(f.path)}/raw`,
              ROOT_TOKEN,
              undefined,
              200,
            )
          ).body;
        const dir = (await t.gitDir('snippet', id))!;
        const commits = git(['--git-dir', dir, 'rev-list', '--reverse', 'main']).split('\n');
        state.snippets.push({ id, json, raw, commits, firstFiles: firstFiles[i] });
      }
      assert.deepEqual(
        state.snippets.map((s) => s.commits.length),
        [1, 2],
      );

      // The layout of an earlier version: <data dir>/repositories/{projects,snippets}/<id>.git, bare.
      const layout: [string, string][] = [
        [(await t.gitDir('project', project.id))!, path.join(legacyDir(), 'projects', `${project.id}.git`)],
        ...(await Promise.all(
          state.snippets.map(
            async (s) =>
              [(await t.gitDir('snippet', s.id))!, path.join(legacyDir(), 'snippets', `${s.id}.git`)] as [
                string,
                string,
              ],
          ),
        )),
      ];
      for (const [from, to] of layout) git(['clone', '-q', '--bare', '--no-local', from, to]);
      // What a branch pushed to the project and deleted later leaves in a bare repository: git keeps its
      // objects (git fsck calls them dangling, which is not an error). Nothing reaches them any more, and the
      // import stores what refs reach, as a clone would.
      const projectDir = layout[0][1];
      const blob = git(['--git-dir', projectDir, 'hash-object', '-w', '--stdin'], 'work in progress\n');
      const tree = git(['--git-dir', projectDir, 'mktree'], `100644 blob ${blob}\twip.txt\n`);
      const wip = git(['--git-dir', projectDir, 'commit-tree', tree, '-p', 'main', '-m', 'wip']);
      git(['--git-dir', projectDir, 'update-ref', 'refs/heads/feature', wip]);
      git(['--git-dir', projectDir, 'update-ref', '-d', 'refs/heads/feature', wip]);
      assert.equal(git(['--git-dir', projectDir, 'fsck', '--strict', '--no-progress']), `dangling commit ${wip}`);
      for (const [, to] of layout) {
        objects += git(['--git-dir', to, 'rev-list', '--objects', '--all']).split('\n').length;
      }
    } finally {
      await t.close();
    }
    // The database of an earlier version has no git rows at all: migration 0005 created these three tables
    // empty. So git_repositories goes too, and the import must create each repository's row itself.
    await asBeforeGitRows(databaseUrl);
  });
  after(() => remove());

  it('snippetd serve refuses to start while the old repositories are there, with one line', () => {
    const r = cli('serve', '--port', '0');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, LEGACY_LINE);
    assert.ok(fs.existsSync(legacyDir()));
  });

  it('an object that does not hash to its id stops migrate with one line naming it; run again once mended, it goes on', async () => {
    const repo = path.join(legacyDir(), 'snippets', `${state.snippets[1].id}.git`);
    const kept = path.join(dataDir, 'kept.git');
    fs.cpSync(repo, kept, { recursive: true });
    try {
      // Its objects loose, as git writes them one at a time; then one of them holding other bytes, which git
      // itself hands out without a word (it checks object ids only in git fsck).
      const packDir = path.join(repo, 'objects', 'pack');
      const [pack] = fs.readdirSync(packDir).filter((f) => f.endsWith('.pack'));
      const packBytes = fs.readFileSync(path.join(packDir, pack));
      fs.rmSync(packDir, { recursive: true });
      fs.mkdirSync(packDir);
      assert.equal(spawnSync('git', ['--git-dir', repo, 'unpack-objects', '-q'], { input: packBytes }).status, 0);
      const blob = git(['--git-dir', repo, 'rev-parse', 'main:a.rb']);
      const loose = path.join(repo, 'objects', blob.slice(0, 2), blob.slice(2));
      fs.chmodSync(loose, 0o644);
      fs.writeFileSync(loose, zlib.deflateSync('blob 9\0tampered\n'));
      assert.equal(git(['--git-dir', repo, 'cat-file', 'blob', blob]), 'tampered');

      const r = cli('migrate');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.equal(r.stdout, '');
      const line = `snippetd: ${repo}: object ${blob} does not hash to its id\n`;
      assert.ok(r.stderr.endsWith(`\n${line}`), r.stderr);
      // The project's repository, imported before it (projects come first), stays imported; the directory
      // stays, and serve still refuses.
      const db = openDatabase(databaseUrl);
      try {
        const kinds = await db.kysely.selectFrom('git_repositories').select('kind').execute();
        assert.ok(
          kinds.some((k) => k.kind === 'project'),
          JSON.stringify(kinds),
        );
      } finally {
        await db.close();
      }
      assert.ok(fs.existsSync(legacyDir()));
      assert.equal(cli('serve', '--port', '0').stderr, LEGACY_LINE);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
      fs.renameSync(kept, repo);
    }
  });

  it('snippetd migrate imports every repository, says how many, and renames the directory', () => {
    const r = cli('migrate');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(importedDirs().length, 1);
    const movedTo = path.join(dataDir, importedDirs()[0]);
    assert.match(importedDirs()[0], /^repositories\.imported-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
    assert.equal(
      r.stdout,
      `snippetd: 3 repositories (${objects} objects) imported into the database; the old directory is now ${movedTo}\n` +
        'snippetd: database is at the latest migration\n',
    );
    const bar = (done: number) => `[${'#'.repeat(done * 10)}${'.'.repeat(30 - done * 10)}]`;
    assert.equal(
      r.stderr,
      `${[0, 1, 2, 3].map((done) => `\rsnippetd: importing repositories ${bar(done)} ${done}/3`).join('')}\n`,
    );
    assert.ok(!fs.existsSync(legacyDir()));
    // The old repositories are kept, untouched, under the new name.
    assert.deepEqual(
      fs.readdirSync(path.join(movedTo, 'snippets')).sort(),
      state.snippets.map((s) => `${s.id}.git`).sort(),
    );
  });

  it("on PostgreSQL, the planner's statistics then count every imported object", {
    skip: TEST_DB === 'postgres' ? false : "SQLite's planner keeps no statistics",
  }, async () => {
    const db = openDatabase(databaseUrl);
    try {
      const { rows } = await sql<{ counted: number; stored: number }>`SELECT
        (SELECT reltuples FROM pg_class WHERE oid = 'git_objects'::regclass)::int AS counted,
        (SELECT count(*) FROM git_objects)::int AS stored`.execute(db.kysely);
      assert.deepEqual(rows, [{ counted: objects, stored: objects }]);
    } finally {
      await db.close();
    }
  });

  it('running snippetd migrate again is harmless', () => {
    const before = importedDirs();
    const r = cli('migrate');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'snippetd: database is at the latest migration\n');
    assert.equal(r.stderr, '');
    assert.deepEqual(importedDirs(), before);
  });

  it('importing the same repositories again (an interrupted run done over) stores nothing twice', async () => {
    const [first] = importedDirs();
    fs.cpSync(path.join(dataDir, first), legacyDir(), { recursive: true });
    const r = cli('migrate');
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^snippetd: 3 repositories \\(${objects} objects\\) imported into the database;`),
    );
    assert.equal(importedDirs().length, 2);
    assert.ok(!fs.existsSync(legacyDir()));
    // One row per object of each repository, after an interrupted run and two whole ones.
    const db = openDatabase(databaseUrl);
    try {
      const { stored } = await db.kysely
        .selectFrom('git_objects')
        .select((eb) => eb.fn.countAll<number>().as('stored'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored), objects);
    } finally {
      await db.close();
    }
  });

  it('the server then serves every snippet, raw at the first commit, and the project file exactly as before', async () => {
    const server = await spawnServer(env());
    try {
      const base = `${server.url}/api/v4/projects/${state.project.id}`;
      const get = async (url: string) => {
        const res = await fetch(url, { headers });
        return { status: res.status, text: await res.text() };
      };
      const project = await get(base);
      assert.equal(project.status, 200, project.text);
      assert.deepEqual(hostless(JSON.parse(project.text)), hostless(state.project));
      const file = await get(`${base}/repository/files/docs%2FREADME.md?ref=main`);
      assert.equal(file.status, 200, file.text);
      assert.deepEqual(JSON.parse(file.text), state.fileJson);
      assert.deepEqual(await get(`${base}/repository/files/docs%2FREADME.md/raw?ref=main`), {
        status: 200,
        text: '# Old project\n',
      });
      const cloneBase = server.url.replace('://', `://root:${ROOT_TOKEN}@`);
      const projectClone = path.join(dataDir, 'clone-project');
      git(['clone', '-q', `${cloneBase}/${state.project.path_with_namespace}.git`, projectClone]);
      assert.equal(fs.readFileSync(path.join(projectClone, 'docs', 'README.md'), 'utf8'), '# Old project\n');

      for (const s of state.snippets) {
        const snippet = await get(`${base}/snippets/${s.id}`);
        assert.equal(snippet.status, 200, snippet.text);
        assert.deepEqual(hostless(JSON.parse(snippet.text)), hostless(s.json));
        for (const [filePath, content] of Object.entries(s.raw))
          assert.deepEqual(await get(`${base}/snippets/${s.id}/files/main/${encodeURIComponent(filePath)}/raw`), {
            status: 200,
            text: content,
          });
        for (const [filePath, content] of Object.entries(s.firstFiles))
          assert.deepEqual(
            await get(`${base}/snippets/${s.id}/files/${s.commits[0]}/${encodeURIComponent(filePath)}/raw`),
            { status: 200, text: content },
          );
        assert.deepEqual(await get(`${base}/snippets/${s.id}/raw`), { status: 200, text: Object.values(s.raw)[0] });
        // A clone has the very same commits: every object kept its id.
        const dir = path.join(dataDir, `clone-${s.id}`);
        git(['clone', '-q', '--bare', `${cloneBase}/${state.project.path_with_namespace}/snippets/${s.id}.git`, dir]);
        assert.deepEqual(git(['--git-dir', dir, 'rev-list', '--reverse', 'main']).split('\n'), s.commits);
        git(['--git-dir', dir, 'fsck', '--strict']);
      }
      // And it takes new writes on top of the imported history.
      const [, two] = state.snippets;
      const update = await fetch(`${base}/snippets/${two.id}`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ files: [{ action: 'update', file_path: 'c.rb', content: 'c = 4\n' }] }),
      });
      assert.equal(update.status, 200, await update.text());
      assert.deepEqual(await get(`${base}/snippets/${two.id}/files/main/c.rb/raw`), { status: 200, text: 'c = 4\n' });
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
  });

  it('snippetd fsck reports no problems', () => {
    const r = cli('fsck');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(
      r.stdout,
      'snippetd fsck: 3 repositories checked, 0 problems, 0 snippets repaired, 0 dangling objects, 0 search index leftovers removed\n',
    );
  });
});

describe('importing an earlier version whose snippet repository is missing from the disk', () => {
  let dataDir: string;
  let databaseUrl: string;
  let remove: () => Promise<void>;
  let projectId: number;
  let snippetId: number;

  before(async () => {
    ({ dataDir, databaseUrl, remove } = await processStorage('snippetd-legacy-orphan-'));
    const t: TestApp = await createTestApp({ dataDir, databaseUrl });
    try {
      projectId = (await t.ok('POST', '/projects', ROOT_TOKEN, { path: 'orphan' }, 201)).id;
      snippetId = (
        await t.ok(
          'POST',
          `/projects/${projectId}/snippets`,
          ROOT_TOKEN,
          { title: 'kept in the rows', files: [{ file_path: 'kept.txt', content: 'placeholder' }] },
          201,
        )
      ).id;
    } finally {
      await t.close();
    }
    // As an earlier version left it: no git rows, the file's bytes in snippet_files.content, and no
    // repository for this snippet on the disk.
    await asBeforeGitRows(databaseUrl, (db) =>
      sql`UPDATE snippet_files SET content = ${Buffer.from('kept in the database\n')}`.execute(db.kysely),
    );
    // No repositories/ directory at all: only the database says something is missing.
  });
  after(() => remove());

  it('serve refuses until migrate rebuilds the snippet from the copy of its files the database kept', async () => {
    const env = {
      ...process.env,
      SNIPPETD_DATA_DIR: dataDir,
      SNIPPETD_DATABASE_URL: databaseUrl,
      SNIPPETD_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      SNIPPETD_LOG_LEVEL: 'warn',
    };
    const serve = spawnSync(...cliCommand('serve', '--port', '0'), {
      env,
      encoding: 'utf8',
    });
    assert.equal(serve.status, 1, serve.stdout + serve.stderr);
    assert.equal(
      serve.stderr,
      'snippetd: the database holds snippets of an earlier version without their repositories; run `snippetd migrate` to rebuild them\n',
    );
    const migrate = spawnSync(...cliCommand('migrate'), { env, encoding: 'utf8' });
    assert.equal(migrate.status, 0, migrate.stderr);
    assert.equal(
      migrate.stdout,
      'snippetd: 1 repositories (0 objects) imported into the database\nsnippetd: database is at the latest migration\n',
    );
    const server = await spawnServer(env);
    try {
      const raw = await fetch(`${server.url}/api/v4/projects/${projectId}/snippets/${snippetId}/raw`, { headers });
      assert.equal(raw.status, 200);
      assert.equal(await raw.text(), 'kept in the database\n');
      const clone = path.join(dataDir, 'clone');
      const url = `${server.url.replace('://', `://root:${ROOT_TOKEN}@`)}/root/orphan/snippets/${snippetId}.git`;
      await new Promise<void>((resolve, reject) =>
        spawn('git', ['clone', '-q', '--bare', url, clone]).on('close', (code) =>
          code === 0 ? resolve() : reject(new Error(`clone ${code}`)),
        ),
      );
      assert.equal(git(['--git-dir', clone, 'log', '--format=%s', 'main']), 'Recovered from the database');
      assert.equal(git(['--git-dir', clone, 'fsck', '--strict', '--no-progress']), '');
    } finally {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
  });
});

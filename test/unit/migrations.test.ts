// Nodes that start together against one database: four `snippetd migrate` processes at the same moment
// all succeed, and each migration is applied exactly once. A migration that rebuilds a table keeps its rows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/storage/db/database.ts';
import { insertUserRow, processStorage, TEST_DB } from '../helper.ts';
import { cliCommand } from '../../scripts/spawn-server.ts';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/storage/db/migrate.ts';
import * as m0001 from '../../src/storage/db/migrations/0001_initial.ts';
import * as m0002 from '../../src/storage/db/migrations/0002_snippet_file_content.ts';
import * as m0003 from '../../src/storage/db/migrations/0003_change_epoch.ts';
import * as m0004 from '../../src/storage/db/migrations/0004_sessions.ts';
import * as m0005 from '../../src/storage/db/migrations/0005_git_rows.ts';
import * as m0006 from '../../src/storage/db/migrations/0006_snippet_list_index.ts';
import * as m0007 from '../../src/storage/db/migrations/0007_rate_limit_counters.ts';
import * as m0008 from '../../src/storage/db/migrations/0008_personal_snippets.ts';
import * as m0009 from '../../src/storage/db/migrations/0009_git_object_parts.ts';
import * as m0010 from '../../src/storage/db/migrations/0010_snippet_search.ts';
import { startSearchIndexer } from '../../src/storage/db/database.ts';

const run = promisify(execFile);

describe('migrations', () => {
  let url: string;
  let dir: string;
  let remove: () => Promise<void>;
  before(async () => {
    ({ dataDir: dir, databaseUrl: url, remove } = await processStorage('snippetd-migrate-'));
  });
  after(() => remove());

  it('applies each migration once when four processes migrate at the same moment', async () => {
    const env = { ...process.env, SNIPPETD_DATA_DIR: dir, SNIPPETD_DATABASE_URL: url };
    const results = await Promise.all(Array.from({ length: 4 }, () => run(...cliCommand('migrate'), { env })));
    for (const r of results) assert.equal(r.stdout.trim(), 'snippetd: database is at the latest migration');
    const db = openDatabase(url);
    try {
      const rows = await db.kysely
        .selectFrom('snippetd_migrations' as any)
        .select('name' as any)
        .orderBy('name' as any)
        .execute();
      assert.deepEqual(
        rows.map((r: any) => r.name),
        [
          '0001_initial',
          '0002_snippet_file_content',
          '0003_change_epoch',
          '0004_sessions',
          '0005_git_rows',
          '0006_snippet_list_index',
          '0007_rate_limit_counters',
          '0008_personal_snippets',
          '0009_git_object_parts',
          '0010_snippet_search',
          '0011_identities',
          '0012_search_index_queue',
          '0013_content_marks_index',
          '0014_snippet_answers_epoch',
          '0015_commits_by_write',
          '0016_refs_moved',
          '0017_group_children',
          '0018_search_index_without_positions',
          '0019_snippet_files_without_rowid',
          '0020_access_epoch_once',
          '0021_ghost_user',
          '0022_repository_access_level',
        ],
      );
    } finally {
      await db.close();
    }
  });

  it('0008 makes snippets.project_id optional and keeps every snippet, its files, its details and its id counter', async () => {
    const storage = await processStorage('snippetd-migrate-0008-');
    const db = openDatabase(storage.databaseUrl);
    try {
      const k = db.kysely as any;
      const earlier = [m0001, m0002, m0003, m0004, m0005, m0006, m0007];
      await sql`CREATE TABLE snippetd_migrations (name text PRIMARY KEY, applied_at text NOT NULL)`.execute(k);
      for (const [i, m] of earlier.entries()) {
        await m.up(k, db.dialect);
        const name = [
          '0001_initial',
          '0002_snippet_file_content',
          '0003_change_epoch',
          '0004_sessions',
          '0005_git_rows',
          '0006_snippet_list_index',
          '0007_rate_limit_counters',
        ][i];
        await k.insertInto('snippetd_migrations').values({ name, applied_at: 'then' }).execute();
      }
      const now = '2026-01-01T00:00:00.000Z';
      const user = await insertUserRow(k, now);
      const ns = await k
        .insertInto('namespaces')
        .values({
          kind: 'user',
          name: 'u',
          path: 'u',
          full_path: 'u',
          full_name: 'u',
          traversal_ids: '1',
          visibility: 'public',
          description: '',
          created_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const project = await k
        .insertInto('projects')
        .values({
          namespace_id: ns.id,
          name: 'p',
          path: 'p',
          full_path: 'u/p',
          visibility: 'public',
          snippets_access_level: 'enabled',
          archived: 0,
          creator_id: user.id,
          created_at: now,
          last_activity_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const snippet = (title: string) => ({
        project_id: project.id,
        author_id: user.id,
        title,
        visibility: 'public',
        file_name: 'a.txt',
        content: '',
        created_at: now,
        updated_at: now,
      });
      const kept = await k.insertInto('snippets').values(snippet('kept')).returning('id').executeTakeFirstOrThrow();
      const gone = await k.insertInto('snippets').values(snippet('gone')).returning('id').executeTakeFirstOrThrow();
      await k
        .insertInto('snippet_files')
        .values({ snippet_id: kept.id, path: 'a.txt', blob_id: 'b'.repeat(40), size: 1 })
        .execute();
      await k
        .insertInto('user_agent_details')
        .values({ snippet_id: kept.id, user_agent: 'ua', ip_address: '1.2.3.4', submitted: 0, created_at: now })
        .execute();
      await k.deleteFrom('snippets').where('id', '=', gone.id).execute();

      assert.deepEqual(await migrateToLatest(db), [
        '0008_personal_snippets',
        '0009_git_object_parts',
        '0010_snippet_search',
        '0011_identities',
        '0012_search_index_queue',
        '0013_content_marks_index',
        '0014_snippet_answers_epoch',
        '0015_commits_by_write',
        '0016_refs_moved',
        '0017_group_children',
        '0018_search_index_without_positions',
        '0019_snippet_files_without_rowid',
        '0020_access_epoch_once',
        '0021_ghost_user',
        '0022_repository_access_level',
      ]);
      // 0010 indexed the stored file: by path, with no text since its blob is not there.
      assert.deepEqual(await k.selectFrom('snippet_file_text').select(['snippet_id', 'path', 'content']).execute(), [
        { snippet_id: kept.id, path: 'a.txt', content: '' },
      ]);
      const rows = await k.selectFrom('snippets').select(['id', 'title', 'project_id']).execute();
      assert.deepEqual(rows, [{ id: kept.id, title: 'kept', project_id: project.id }]);
      assert.equal((await k.selectFrom('snippet_files').selectAll().execute()).length, 1);
      assert.equal((await k.selectFrom('user_agent_details').selectAll().execute()).length, 1);
      const personal = await k
        .insertInto('snippets')
        .values({ ...snippet('personal'), project_id: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      assert.ok(personal.id > gone.id, `a deleted snippet's id is not given again (${personal.id} after ${gone.id})`);
      // The foreign keys still hold: a file of no snippet is refused, a snippet's delete takes its files.
      await assert.rejects(
        k.insertInto('snippet_files').values({ snippet_id: 99999, path: 'x', blob_id: 'c', size: 1 }).execute(),
      );
      await k.deleteFrom('snippets').where('id', '=', kept.id).execute();
      assert.equal((await k.selectFrom('snippet_files').selectAll().execute()).length, 0);
    } finally {
      await db.close();
      await storage.remove();
    }
  });
  it('a new SQLite database gives the pages it no longer uses back to the file system, a few at a time', {
    skip: TEST_DB === 'postgres' && 'SQLite only',
  }, async () => {
    const storage = await processStorage('snippetd-free-pages-');
    const db = openDatabase(storage.databaseUrl);
    try {
      const k = db.kysely as any;
      await migrateToLatest(db);
      const pragma = async (name: string) =>
        Number(((await sql.raw(`PRAGMA ${name}`).execute(k)).rows[0] as Record<string, number>)[name]);
      assert.equal(await pragma('auto_vacuum'), 2); // incremental
      await sql`CREATE TABLE scratch (x blob)`.execute(k);
      for (let i = 0; i < 40; i++) await sql`INSERT INTO scratch VALUES (randomblob(256 * 1024))`.execute(k);
      await sql`DROP TABLE scratch`.execute(k);
      assert.ok((await pragma('freelist_count')) > 2000, 'ten megabytes of pages free');
      startSearchIndexer(db);
      for (let i = 0; (await pragma('freelist_count')) > 512; i++) {
        assert.ok(i < 300, 'given back within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await db.close();
      await storage.remove();
    }
  });

  it("0012 queues every stored snippet and file for SQLite's search index, which its indexer then fills and empties", {
    skip: TEST_DB === 'postgres' && 'SQLite only: PostgreSQL keeps its pg_trgm indexes of 0010',
  }, async () => {
    const storage = await processStorage('snippetd-migrate-0012-');
    const db = openDatabase(storage.databaseUrl);
    try {
      const k = db.kysely as any;
      await sql`CREATE TABLE snippetd_migrations (name text PRIMARY KEY, applied_at text NOT NULL)`.execute(k);
      const earlier = { m0001, m0002, m0003, m0004, m0005, m0006, m0007, m0008, m0009, m0010 };
      const names = [
        '0001_initial',
        '0002_snippet_file_content',
        '0003_change_epoch',
        '0004_sessions',
        '0005_git_rows',
        '0006_snippet_list_index',
        '0007_rate_limit_counters',
        '0008_personal_snippets',
        '0009_git_object_parts',
        '0010_snippet_search',
      ];
      for (const [i, m] of Object.values(earlier).entries()) {
        await m.up(k, db.dialect);
        await k.insertInto('snippetd_migrations').values({ name: names[i], applied_at: 'then' }).execute();
      }
      const now = '2026-01-01T00:00:00.000Z';
      const user = await insertUserRow(k, now);
      // Texts of several pieces (8 KiB each), the words looked for in the last one.
      const description = `${'d'.repeat(20_000)} zebradescription`;
      const content = `${'c'.repeat(30_000)} zebracontent`;
      const snippet = await k
        .insertInto('snippets')
        .values({
          project_id: null,
          author_id: user.id,
          title: 'zebratitle',
          description,
          visibility: 'public',
          file_name: 'a.txt',
          content: '',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const file = await k
        .insertInto('snippet_file_text')
        .values({ snippet_id: snippet.id, path: 'zebrapath.txt', content })
        .returning('id')
        .executeTakeFirstOrThrow();

      assert.deepEqual(await migrateToLatest(db), [
        '0011_identities',
        '0012_search_index_queue',
        '0013_content_marks_index',
        '0014_snippet_answers_epoch',
        '0015_commits_by_write',
        '0016_refs_moved',
        '0017_group_children',
        '0018_search_index_without_positions',
        '0019_snippet_files_without_rowid',
        '0020_access_epoch_once',
        '0021_ghost_user',
        '0022_repository_access_level',
      ]);
      const queue = () =>
        k.selectFrom('search_index_queue').select(['op', 'kind', 'source_id']).orderBy('id').execute();
      assert.deepEqual(await queue(), [
        { op: 'index', kind: 'fields', source_id: snippet.id },
        { op: 'index', kind: 'file', source_id: file.id },
      ]);
      const emptied = async () => {
        for (let i = 0; (await queue()).length; i++) {
          assert.ok(i < 600, 'the indexer empties its queue within a minute');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      // The index keeps no positions (0018): a text is asked for as all of its trigrams.
      const trigrams = (text: string) =>
        Array.from({ length: text.length - 2 }, (_, i) => `"${text.slice(i, i + 3)}"`).join(' AND ');
      /** The sources (ids) whose pieces in `table` hold `phrase`'s trigrams. */
      const found = async (table: string, phrase: string) =>
        (
          await sql<{ id: number }>`SELECT DISTINCT CASE WHEN rowid < ${sql.lit(2 ** 40)} THEN rowid
            ELSE (rowid - ${sql.lit(2 ** 40)}) / 1024 END AS id FROM ${sql.id(table)}
            WHERE ${sql.id(table)} MATCH ${trigrams(phrase)}`.execute(k)
        ).rows.map((r) => r.id);
      startSearchIndexer(db);
      await emptied();
      for (const word of ['zebratitle', 'zebradescription'])
        assert.deepEqual(await found('snippet_fields_fts', word), [snippet.id]);
      for (const word of ['zebrapath', 'zebracontent'])
        assert.deepEqual(await found('snippet_file_text_fts', word), [file.id]);
      assert.deepEqual(await k.selectFrom('search_index_pieces').selectAll().orderBy('kind').execute(), [
        { kind: 'fields', source_id: snippet.id, pieces: 3 },
        { kind: 'file', source_id: file.id, pieces: 4 },
      ]);

      await k.deleteFrom('snippets').where('id', '=', snippet.id).execute();
      await emptied();
      assert.deepEqual(await found('snippet_fields_fts', 'zebra'), []);
      assert.deepEqual(await found('snippet_file_text_fts', 'zebra'), []);
      assert.deepEqual(await k.selectFrom('search_index_pieces').selectAll().execute(), []);
    } finally {
      await db.close();
      await storage.remove();
    }
  });
});

// Nodes that start together against one database: four `snippetd migrate` processes at the same moment
// all succeed, and each migration is applied exactly once; on PostgreSQL the planner then has statistics
// of every table.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/storage/db/database.ts';
import { sql } from 'kysely';
import { processStorage, TEST_DB } from '../helper.ts';
import { CLI } from '../../scripts/spawn-server.ts';

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
    const results = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', CLI, 'migrate'], { env })),
    );
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
        ],
      );
    } finally {
      await db.close();
    }
  });

  it('on PostgreSQL, leaves the planner statistics of every table it made', {
    skip: TEST_DB === 'postgres' ? false : "SQLite's planner keeps no statistics",
  }, async () => {
    const db = openDatabase(url);
    try {
      const { rows } = await sql<{ table: string; analyzed: boolean }>`SELECT relname AS table,
        last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE schemaname = current_schema()
        ORDER BY relname`.execute(db.kysely);
      assert.ok(rows.length > 10, `${rows.length} tables`);
      assert.deepEqual(
        rows.filter((r) => !r.analyzed),
        [],
      );
    } finally {
      await db.close();
    }
  });
});

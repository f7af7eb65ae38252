// Versioned migrations, run at start-up and by `snippetd migrate`. Each migration is a module in
// ./migrations; add new ones to the list below, never edit one that has shipped. Applied names are kept
// in `snippetd_migrations`, in the connection's own schema. Pending migrations run in one transaction;
// on PostgreSQL an advisory lock makes nodes that start together take turns (SQLite transactions are
// serialised anyway), so each migration runs exactly once.
import { sql, type Kysely } from 'kysely';
import type { Db, DialectName } from './database.ts';
import { refreshPlannerStatistics } from './statistics.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_snippet_file_content.ts';
import * as m0003 from './migrations/0003_change_epoch.ts';
import * as m0004 from './migrations/0004_sessions.ts';
import * as m0005 from './migrations/0005_git_rows.ts';
import * as m0006 from './migrations/0006_snippet_list_index.ts';
import * as m0007 from './migrations/0007_rate_limit_counters.ts';
import * as m0008 from './migrations/0008_personal_snippets.ts';
import * as m0009 from './migrations/0009_git_object_parts.ts';
import * as m0010 from './migrations/0010_snippet_search.ts';
import * as m0011 from './migrations/0011_identities.ts';
import * as m0012 from './migrations/0012_search_index_queue.ts';
import * as m0013 from './migrations/0013_content_marks_index.ts';
import * as m0014 from './migrations/0014_snippet_answers_epoch.ts';
import * as m0015 from './migrations/0015_commits_by_write.ts';
import * as m0016 from './migrations/0016_refs_moved.ts';
import * as m0017 from './migrations/0017_group_children.ts';
import * as m0018 from './migrations/0018_search_index_without_positions.ts';
import * as m0019 from './migrations/0019_snippet_files_without_rowid.ts';
import * as m0020 from './migrations/0020_access_epoch_once.ts';
import * as m0021 from './migrations/0021_ghost_user.ts';
import * as m0022 from './migrations/0022_repository_access_level.ts';

type Migration = { up(db: Kysely<any>, dialect: DialectName): Promise<void> };

const MIGRATIONS: [name: string, migration: Migration][] = [
  ['0001_initial', m0001],
  ['0002_snippet_file_content', m0002],
  ['0003_change_epoch', m0003],
  ['0004_sessions', m0004],
  ['0005_git_rows', m0005],
  ['0006_snippet_list_index', m0006],
  ['0007_rate_limit_counters', m0007],
  ['0008_personal_snippets', m0008],
  ['0009_git_object_parts', m0009],
  ['0010_snippet_search', m0010],
  ['0011_identities', m0011],
  ['0012_search_index_queue', m0012],
  ['0013_content_marks_index', m0013],
  ['0014_snippet_answers_epoch', m0014],
  ['0015_commits_by_write', m0015],
  ['0016_refs_moved', m0016],
  ['0017_group_children', m0017],
  ['0018_search_index_without_positions', m0018],
  ['0019_snippet_files_without_rowid', m0019],
  ['0020_access_epoch_once', m0020],
  ['0021_ghost_user', m0021],
  ['0022_repository_access_level', m0022],
];

/** An arbitrary constant naming snippetd's migration lock among PostgreSQL advisory locks. */
const MIGRATION_LOCK = 727_274_001;

export async function migrateToLatest(db: Db): Promise<string[]> {
  const sqlite = db.dialect === 'sqlite';
  const applied = await db.kysely.connection().execute(async (tx) => {
    // SQLite rebuilds a table to change a column (0008): with foreign keys on, dropping the old table would
    // delete the rows that refer to it. They are off while migrations run and checked before the commit.
    if (sqlite) await sql.raw('PRAGMA foreign_keys = OFF').execute(tx);
    try {
      // SQLite: take the write lock up front, or two processes that both read first deadlock on upgrade.
      await sql.raw(sqlite ? 'BEGIN IMMEDIATE' : 'BEGIN').execute(tx);
      try {
        const applied = await migratePending(tx, db.dialect);
        if (sqlite && applied.length) await checkForeignKeys(tx);
        await sql.raw('COMMIT').execute(tx);
        return applied;
      } catch (error) {
        await sql.raw('ROLLBACK').execute(tx);
        throw error;
      }
    } finally {
      if (sqlite) await sql.raw('PRAGMA foreign_keys = ON').execute(tx);
    }
  });
  // A migration may have copied or rebuilt tables; the planner must not go on counting them as before.
  if (applied.length) await refreshPlannerStatistics(db);
  return applied;
}

async function checkForeignKeys(tx: Kysely<any>): Promise<void> {
  const broken = await sql<{ table: string }>`PRAGMA foreign_key_check`.execute(tx);
  if (broken.rows.length)
    throw new Error(`a migration left rows that refer to nothing: ${JSON.stringify(broken.rows)}`);
}

async function migratePending(tx: Kysely<any>, dialect: DialectName): Promise<string[]> {
  if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
  await sql`CREATE TABLE IF NOT EXISTS snippetd_migrations (name text PRIMARY KEY, applied_at text NOT NULL)`.execute(
    tx,
  );
  const done = new Set(
    (await sql<{ name: string }>`SELECT name FROM snippetd_migrations`.execute(tx)).rows.map((r) => r.name),
  );
  // A newer version's schema served by this one (a downgrade, a newer backup restored) fails its searches and
  // writes without what the newer one keeps up (refs_moved, the search queue's triggers): refused, as Gitea does.
  const known = new Set(MIGRATIONS.map(([name]) => name));
  const newer = [...done].filter((name) => !known.has(name)).sort();
  if (newer.length)
    throw new Error(
      `it was migrated by a newer snippetd (${newer.length > 1 ? 'migrations' : 'migration'} ${newer.join(', ')}, unknown to this one); run that version or a later one, or restore a backup made before it`,
    );
  const applied: string[] = [];
  for (const [name, migration] of MIGRATIONS) {
    if (done.has(name)) continue;
    await migration.up(tx, dialect);
    await sql`INSERT INTO snippetd_migrations (name, applied_at) VALUES (${name}, ${new Date().toISOString()})`.execute(
      tx,
    );
    applied.push(name);
  }
  return applied;
}

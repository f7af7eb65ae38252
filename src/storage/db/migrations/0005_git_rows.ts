import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// Git repositories as rows (docs/architecture.md#storage): every object of every project and snippet
// repository, deflated exactly as a pack entry carries it, and every ref, moved by compare-and-swap in the
// same transaction as the rows it belongs with. Nothing of a repository lives on a node's disk any more.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const binary = dialect === 'postgres' ? 'bytea' : 'blob';
  await db.schema
    .createTable('git_repositories')
    .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    // The branch HEAD names.
    .addColumn('head', 'text', (c) => c.notNull())
    // Counts the writes that added objects: each object row carries the count of the write that added it,
    // so a node's serving cache asks only for the objects written since it last looked.
    .addColumn('writes', 'integer', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('git_repositories_owner', ['kind', 'owner_id'])
    .execute();

  // Keyed by repository and id, without a separate rowid in SQLite: 100,000 small repositories stay small.
  const withoutRowid = <T extends { modifyEnd(s: ReturnType<typeof sql>): T }>(t: T) =>
    dialect === 'sqlite' ? t.modifyEnd(sql`WITHOUT ROWID`) : t;
  await withoutRowid(
    db.schema
      .createTable('git_objects')
      .addColumn('repository_id', 'integer', (c) => c.notNull())
      .addColumn('oid', binary, (c) => c.notNull())
      // Pack type numbers: 1 commit, 2 tree, 3 blob, 4 tag.
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('write', 'integer', (c) => c.notNull())
      .addColumn('data', binary, (c) => c.notNull())
      .addPrimaryKeyConstraint('git_objects_pk', ['repository_id', 'oid']),
  ).execute();
  await withoutRowid(
    db.schema
      .createTable('git_refs')
      .addColumn('repository_id', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('oid', binary, (c) => c.notNull())
      .addPrimaryKeyConstraint('git_refs_pk', ['repository_id', 'name']),
  ).execute();

  // The bytes of a snippet's files now come from its blobs; snippet_files stays as the index of its head.
  // Its content column is no longer written, but stays: importing an earlier version's repositories
  // (domain/legacy-repositories.ts) rebuilds from it a snippet whose repository is missing from the disk.
}

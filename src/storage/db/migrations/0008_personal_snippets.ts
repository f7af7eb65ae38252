import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// Personal snippets belong to no project: snippets.project_id may be null. Lists of one author's snippets
// and of everyone's public or internal ones walk an index newest first instead of the table.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`ALTER TABLE snippets ALTER COLUMN project_id DROP NOT NULL`.execute(db);
  } else {
    await rebuildWithNullableProject(db);
  }
  // Each list walks one of these newest first, reading what the visibility rule needs from the index alone.
  await db.schema
    .createIndex('snippets_author_list')
    .on('snippets')
    .columns(['author_id', 'id', 'project_id', 'visibility'])
    .execute();
  // The personal ones of a level, newest first. PostgreSQL reads `project_id IS NULL` rows in id order only
  // from an index that holds nothing else (with project_id in its key it sorted every match of a deep page);
  // SQLite's planner passes a partial index by for the (project_id, id) one, and takes this one.
  const personal = db.schema.createIndex('snippets_personal_list').on('snippets');
  if (dialect === 'postgres')
    await personal.columns(['visibility', 'id']).where(sql.ref('project_id'), 'is', null).execute();
  else await personal.columns(['visibility', 'project_id', 'id']).execute();
}

/**
 * SQLite cannot drop a NOT NULL: the table is made again with the constraint removed from its own
 * definition, as SQLite's documented rebuild does (migrate.ts runs it with foreign keys off and checks them
 * before committing). The AUTOINCREMENT counter is carried over, so no deleted snippet's id is given again.
 */
async function rebuildWithNullableProject(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ sql: string }>`
    SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'snippets'`.execute(db);
  const definition = rows[0].sql;
  const nullable = definition.replace(/("project_id" integer) not null/i, '$1');
  if (nullable === definition) throw new Error(`snippets.project_id is not declared as expected: ${definition}`);
  const indexes = await sql<{ sql: string }>`
    SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'snippets' AND sql IS NOT NULL`.execute(db);
  const sequence = await sql<{ seq: number }>`SELECT seq FROM sqlite_sequence WHERE name = 'snippets'`.execute(db);
  await sql.raw(nullable.replace(/^create table "snippets"/i, 'CREATE TABLE "snippets_rebuilt"')).execute(db);
  await sql`INSERT INTO snippets_rebuilt SELECT * FROM snippets`.execute(db);
  await sql`DROP TABLE snippets`.execute(db);
  await sql`ALTER TABLE snippets_rebuilt RENAME TO snippets`.execute(db);
  for (const index of indexes.rows) await sql.raw(index.sql).execute(db);
  if (sequence.rows.length)
    await sql`UPDATE sqlite_sequence SET seq = max(seq, ${sequence.rows[0].seq}) WHERE name = 'snippets'`.execute(db);
}

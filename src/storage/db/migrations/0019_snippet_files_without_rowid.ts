import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// SQLite only: snippet_files is kept in the order of its key (snippet, path), without a rowid and the index
// of the key beside it, which took 24 MiB of a million snippets' 1,084. Its triggers (0014) go with the old
// table and are made again.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`CREATE TABLE snippet_files_by_key (
    snippet_id integer NOT NULL REFERENCES snippets (id) ON DELETE CASCADE,
    path text NOT NULL,
    blob_id text NOT NULL,
    size integer NOT NULL,
    content blob NOT NULL DEFAULT '',
    CONSTRAINT snippet_files_pk PRIMARY KEY (snippet_id, path)) WITHOUT ROWID`.execute(db);
  await sql`INSERT INTO snippet_files_by_key (snippet_id, path, blob_id, size, content)
    SELECT snippet_id, path, blob_id, size, content FROM snippet_files`.execute(db);
  await sql`DROP TABLE snippet_files`.execute(db);
  await sql`ALTER TABLE snippet_files_by_key RENAME TO snippet_files`.execute(db);
  for (const event of ['INSERT', 'UPDATE', 'DELETE'])
    await sql`CREATE TRIGGER ${sql.raw(`snippet_files_${event.toLowerCase()}_content_epoch`)} AFTER ${sql.raw(event)}
      ON snippet_files BEGIN UPDATE change_epoch SET value = value + 1 WHERE id = 2; END`.execute(db);
}

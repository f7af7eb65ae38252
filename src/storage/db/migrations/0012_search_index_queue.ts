import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// SQLite only: the search index of 0010 was kept by triggers inside each write's transaction, where FTS5
// took seconds for a large file of random text (it costs per distinct trigram) on the event loop and the only
// connection. Now the triggers only queue the work (search_index_queue: sources to index, FTS rows to
// delete) and search-indexing.ts does it off the event loop, as pieces in contentless FTS5 tables, merging in
// small steps (automerge off). Until a source is indexed, searches read it from the queue (tables/
// snippet-text.ts). Every stored snippet and file is queued here. PostgreSQL's pg_trgm indexes are untouched.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const trigger of ['snippet_fields', 'snippet_file_text'])
    for (const event of ['insert', 'delete', 'update'])
      await sql`DROP TRIGGER ${sql.id(`${trigger}_${event}`)}`.execute(db);
  await sql`DROP TABLE snippet_fields_fts`.execute(db);
  await sql`DROP TABLE snippet_file_text_fts`.execute(db);
  await sql`CREATE VIRTUAL TABLE snippet_fields_fts USING fts5(title, description, file_name, content='',
    contentless_delete=1, tokenize='trigram')`.execute(db);
  await sql`CREATE VIRTUAL TABLE snippet_file_text_fts USING fts5(path, content, content='', contentless_delete=1,
    tokenize='trigram')`.execute(db);
  for (const table of ['snippet_fields_fts', 'snippet_file_text_fts']) {
    // Merges only when the indexer asks, a few pages at a time; a crisis merge (a whole level in one write) is
    // left for a backlog the indexer could not keep up with.
    await sql`INSERT INTO ${sql.id(table)} (${sql.id(table)}, rank) VALUES ('automerge', 0)`.execute(db);
    await sql`INSERT INTO ${sql.id(table)} (${sql.id(table)}, rank) VALUES ('crisismerge', 64)`.execute(db);
  }
  // The work, in the order of the writes: `index` a source (next_piece: how far it got), `delete` its pieces.
  // kind 'file' is a snippet_file_text row, 'fields' a snippet's title, description and file name.
  // text_bytes: what a search reads of the source while it waits here.
  await sql`CREATE TABLE search_index_queue (
    id integer PRIMARY KEY AUTOINCREMENT,
    op text NOT NULL CHECK (op IN ('index', 'delete')),
    kind text NOT NULL CHECK (kind IN ('file', 'fields')),
    source_id integer NOT NULL,
    next_piece integer NOT NULL DEFAULT 0,
    text_bytes integer NOT NULL DEFAULT 0)`.execute(db);
  await sql`CREATE INDEX search_index_queue_source ON search_index_queue (kind, source_id)`.execute(db);
  // How many pieces of each source are in its FTS table (their rowids follow from the source's id).
  await sql`CREATE TABLE search_index_pieces (
    kind text NOT NULL,
    source_id integer NOT NULL,
    pieces integer NOT NULL,
    PRIMARY KEY (kind, source_id)) WITHOUT ROWID`.execute(db);

  const fieldsBytes = (row: string) =>
    sql.raw(`octet_length(coalesce(${row}.title, '')) + octet_length(coalesce(${row}.description, ''))
      + octet_length(coalesce(${row}.file_name, ''))`);
  const fileBytes = (row: string) => sql.raw(`octet_length(${row}.path) + octet_length(${row}.content)`);
  // A source going away: its work not yet begun goes too; its pieces indexed are deleted in their turn.
  const forget = (kind: string) =>
    sql.raw(`DELETE FROM search_index_queue WHERE kind = '${kind}' AND source_id = old.id AND op = 'index'
        AND next_piece = 0;
      INSERT INTO search_index_queue (op, kind, source_id) SELECT 'delete', '${kind}', old.id
        WHERE EXISTS (SELECT 1 FROM search_index_pieces WHERE kind = '${kind}' AND source_id = old.id);`);
  const queue = (kind: string, bytes: ReturnType<typeof sql.raw>) =>
    sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes) VALUES ('index', ${sql.lit(kind)}, new.id, ${bytes});`;

  await sql`CREATE TRIGGER snippet_fields_queue_insert AFTER INSERT ON snippets BEGIN
    ${queue('fields', fieldsBytes('new'))} END`.execute(db);
  await sql`CREATE TRIGGER snippet_fields_queue_delete AFTER DELETE ON snippets BEGIN ${forget('fields')} END`.execute(
    db,
  );
  await sql`CREATE TRIGGER snippet_fields_queue_update AFTER UPDATE OF title, description, file_name ON snippets
    WHEN old.title IS NOT new.title OR old.description IS NOT new.description OR old.file_name IS NOT new.file_name
    BEGIN ${forget('fields')} ${queue('fields', fieldsBytes('new'))} END`.execute(db);
  await sql`CREATE TRIGGER snippet_file_text_queue_insert AFTER INSERT ON snippet_file_text BEGIN
    ${queue('file', fileBytes('new'))} END`.execute(db);
  await sql`CREATE TRIGGER snippet_file_text_queue_delete AFTER DELETE ON snippet_file_text BEGIN
    ${forget('file')} END`.execute(db);
  await sql`CREATE TRIGGER snippet_file_text_queue_update AFTER UPDATE ON snippet_file_text BEGIN
    ${forget('file')} ${queue('file', fileBytes('new'))} END`.execute(db);

  await sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes)
    SELECT 'index', 'fields', s.id, ${fieldsBytes('s')} FROM snippets s ORDER BY s.id`.execute(db);
  await sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes)
    SELECT 'index', 'file', t.id, ${fileBytes('t')} FROM snippet_file_text t ORDER BY t.id`.execute(db);
}

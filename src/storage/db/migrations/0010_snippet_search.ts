import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';
import { TEXT_INDEX_MAX_BYTES, textRows } from '../tables/snippet-text.ts';

// The search index of snippets' files (tables/snippet-text.ts): a row per file with its path and text, and an
// index answering substrings: SQLite's FTS5 with the trigram tokenizer, kept from the rows by triggers;
// PostgreSQL's pg_trgm GIN indexes. Every snippet already stored is indexed here, from its repository's blobs.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const table = db.schema.createTable('snippet_file_text');
  await (dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('snippet_id', 'integer', (c) => c.notNull().references('snippets.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('snippet_file_text_file')
    .on('snippet_file_text')
    .columns(['snippet_id', 'path'])
    .unique()
    .execute();
  if (dialect === 'postgres') {
    const trgm = await trigramSchema(db);
    const opclass = sql`${sql.id(trgm)}.gin_trgm_ops`;
    await sql`CREATE INDEX snippet_file_text_path_trgm ON snippet_file_text USING gin (path ${opclass})`.execute(db);
    await sql`CREATE INDEX snippet_file_text_content_trgm ON snippet_file_text USING gin (content ${opclass})`.execute(
      db,
    );
    // The fields search matches, as the storage's containsText spells them (lower(coalesce(…, ''))).
    for (const column of ['title', 'description', 'file_name'])
      await sql`CREATE INDEX ${sql.id(`snippets_${column}_trgm`)} ON snippets
        USING gin ((lower(coalesce(${sql.id(column)}, ''))) ${opclass})`.execute(db);
  } else {
    // The snippets' own searched fields, indexed from their rows the same way.
    await sql`CREATE VIRTUAL TABLE snippet_fields_fts USING fts5(title, description, file_name, content='snippets',
      content_rowid='id', tokenize='trigram')`.execute(db);
    await sql`INSERT INTO snippet_fields_fts (snippet_fields_fts) VALUES ('rebuild')`.execute(db);
    await sql`CREATE TRIGGER snippet_fields_insert AFTER INSERT ON snippets BEGIN
      INSERT INTO snippet_fields_fts (rowid, title, description, file_name)
      VALUES (new.id, new.title, new.description, new.file_name); END`.execute(db);
    await sql`CREATE TRIGGER snippet_fields_delete AFTER DELETE ON snippets BEGIN
      INSERT INTO snippet_fields_fts (snippet_fields_fts, rowid, title, description, file_name)
      VALUES ('delete', old.id, old.title, old.description, old.file_name); END`.execute(db);
    await sql`CREATE TRIGGER snippet_fields_update AFTER UPDATE OF title, description, file_name ON snippets BEGIN
      INSERT INTO snippet_fields_fts (snippet_fields_fts, rowid, title, description, file_name)
      VALUES ('delete', old.id, old.title, old.description, old.file_name);
      INSERT INTO snippet_fields_fts (rowid, title, description, file_name)
      VALUES (new.id, new.title, new.description, new.file_name); END`.execute(db);
    await sql`CREATE VIRTUAL TABLE snippet_file_text_fts USING fts5(path, content, content='snippet_file_text',
      content_rowid='id', tokenize='trigram')`.execute(db);
    await sql`CREATE TRIGGER snippet_file_text_insert AFTER INSERT ON snippet_file_text BEGIN
      INSERT INTO snippet_file_text_fts (rowid, path, content) VALUES (new.id, new.path, new.content); END`.execute(db);
    await sql`CREATE TRIGGER snippet_file_text_delete AFTER DELETE ON snippet_file_text BEGIN
      INSERT INTO snippet_file_text_fts (snippet_file_text_fts, rowid, path, content)
      VALUES ('delete', old.id, old.path, old.content); END`.execute(db);
    await sql`CREATE TRIGGER snippet_file_text_update AFTER UPDATE ON snippet_file_text BEGIN
      INSERT INTO snippet_file_text_fts (snippet_file_text_fts, rowid, path, content)
      VALUES ('delete', old.id, old.path, old.content);
      INSERT INTO snippet_file_text_fts (rowid, path, content) VALUES (new.id, new.path, new.content); END`.execute(db);
  }
  // Search answers the latest updated first (GitLab's order): a page walks this instead of sorting every match.
  await db.schema.createIndex('snippets_updated').on('snippets').columns(['updated_at', 'id']).execute();
  await indexStoredSnippets(db);
}

/**
 * The schema of pg_trgm, installed in `public` when it is not there yet: an extension is one per database, and
 * the connection's own schema (snippetd's may be one of several in a database) would take it away when dropped.
 * Its operator class is named with that schema, whatever the search path.
 */
async function trigramSchema(db: Kysely<any>): Promise<string> {
  const installed = () =>
    sql<{ schema: string }>`SELECT n.nspname AS schema FROM pg_extension e
      JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`.execute(db);
  let { rows } = await installed();
  if (!rows.length) {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
    ({ rows } = await installed());
  }
  return rows[0].schema;
}

/** Indexes the files of every stored snippet, a snippet at a time, with a progress line on large instances. */
export async function indexStoredSnippets(db: Kysely<any>): Promise<void> {
  const { n } = await db
    .selectFrom('snippets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const total = Number(n);
  let done = 0;
  let after = 0;
  for (;;) {
    const ids: number[] = (
      await db.selectFrom('snippets').select('id').where('id', '>', after).orderBy('id').limit(500).execute()
    ).map((r: { id: number }) => r.id);
    if (!ids.length) break;
    const files = await db
      .selectFrom('snippet_files')
      .select(['snippet_id', 'path', 'blob_id', 'size'])
      .where('snippet_id', 'in', ids)
      .execute();
    for (const id of ids) {
      const own = files.filter((f: { snippet_id: number }) => f.snippet_id === id);
      if (own.length)
        await db
          .insertInto('snippet_file_text')
          .values(await textRows(db, id, own, TEXT_INDEX_MAX_BYTES))
          .execute();
    }
    done += ids.length;
    after = ids[ids.length - 1];
    if (total >= 5000) process.stderr.write(`snippetd: search index: ${done} of ${total} snippets\n`);
  }
}

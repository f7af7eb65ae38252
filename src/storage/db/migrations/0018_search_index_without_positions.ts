import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// SQLite only: the search index's FTS5 tables keep no positions or columns (detail=none), a fifth of their size
// with positions (100,000 texts of bench/million.ts's shape: 17.6 MiB, now 3.7), which kept SQLite at a million
// snippets over its gigabyte. A search asks for all of its text's trigrams instead of their phrase and checks
// each candidate's text exactly (tables/snippet-text.ts). Its rows move too: a source's first piece is at the
// source's id (search-indexing.ts#pieceRowid), which halves what is left. Everything is indexed again: the
// queue takes every source, and a search reads a queued source's text meanwhile, as after 0012.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`DELETE FROM search_index_queue`.execute(db);
  await sql`DELETE FROM search_index_pieces`.execute(db);
  await sql`DROP TABLE snippet_fields_fts`.execute(db);
  await sql`DROP TABLE snippet_file_text_fts`.execute(db);
  await sql`CREATE VIRTUAL TABLE snippet_fields_fts USING fts5(title, description, file_name, content='',
    contentless_delete=1, detail=none, tokenize='trigram')`.execute(db);
  await sql`CREATE VIRTUAL TABLE snippet_file_text_fts USING fts5(path, content, content='', contentless_delete=1,
    detail=none, tokenize='trigram')`.execute(db);
  for (const table of ['snippet_fields_fts', 'snippet_file_text_fts']) {
    await sql`INSERT INTO ${sql.id(table)} (${sql.id(table)}, rank) VALUES ('automerge', 0)`.execute(db);
    await sql`INSERT INTO ${sql.id(table)} (${sql.id(table)}, rank) VALUES ('crisismerge', 64)`.execute(db);
  }
  await sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes)
    SELECT 'index', 'fields', s.id, octet_length(coalesce(s.title, '')) + octet_length(coalesce(s.description, ''))
      + octet_length(coalesce(s.file_name, '')) FROM snippets s ORDER BY s.id`.execute(db);
  await sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes)
    SELECT 'index', 'file', t.id, octet_length(t.path) + octet_length(t.content)
    FROM snippet_file_text t ORDER BY t.id`.execute(db);
}

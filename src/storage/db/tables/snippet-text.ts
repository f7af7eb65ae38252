// The search index of snippets' files: one row per file of a snippet's head with its path and, for a text
// file within the size limit, its content (else ''). It is written by the snippets table's syncFiles and
// delete, so in the transaction of every write, push and delete. Searching it: SQLite keeps an FTS5 index with
// the trigram tokenizer over the rows (snippet_file_text_fts, kept by triggers), PostgreSQL pg_trgm GIN
// indexes; both answer a case-insensitive substring of three characters or more without reading every row.
import zlib from 'node:zlib';
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../database.ts';
import type { Database } from '../schema.ts';
import type { IndexedFile } from './snippets.ts';
import { readParts } from '../../git/object-parts.ts';

/** Files larger than this are indexed by path only (GitLab's indexer keeps the same 1 MiB default). */
export const TEXT_INDEX_MAX_BYTES = 1024 * 1024;

/** A file's text as the index keeps it: '' for a binary file (git's rule: a NUL byte) or an oversized one. */
export function indexedText(content: Buffer): string {
  if (content.length > TEXT_INDEX_MAX_BYTES || content.includes(0)) return '';
  return content.toString('utf8');
}

/** The inflated blobs of a snippet's repository, by id (they are written before the index in a transaction). */
async function snippetBlobs(db: Kysely<Database>, snippetId: number, ids: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!ids.length) return out;
  const rows = await db
    .selectFrom('git_objects as o')
    .innerJoin('git_repositories as r', 'r.id', 'o.repository_id')
    .select(['o.oid', 'o.data', 'o.parts'])
    .where('r.kind', '=', 'snippet')
    .where('r.owner_id', '=', snippetId)
    .where(
      'o.oid',
      'in',
      ids.map((id) => Buffer.from(id, 'hex')),
    )
    .execute();
  for (const r of rows)
    out.set(
      Buffer.from(r.oid).toString('hex'),
      zlib.inflateSync(r.parts === null ? r.data : await readParts(db, r.parts)),
    );
  return out;
}

/** Rows for files, their content read only when it may be indexed. */
export async function textRows(db: Kysely<Database>, snippetId: number, files: IndexedFile[]) {
  const small = files.filter((f) => f.size <= TEXT_INDEX_MAX_BYTES).map((f) => f.blob_id);
  const blobs = await snippetBlobs(db, snippetId, [...new Set(small)]);
  return files.map((f) => {
    const blob = blobs.get(f.blob_id);
    return { snippet_id: snippetId, path: f.path, content: blob ? indexedText(blob) : '' };
  });
}

/** An FTS5 phrase: the text in double quotes, its own quotes doubled. */
const ftsPhrase = (text: string) => `"${text.replace(/"/g, '""')}"`;
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function snippetTextTable(db: Kysely<Database>, dialect: DialectName) {
  return {
    /** Replaces the rows of `removed` paths and of `changed` files (whose blobs must be in the repository). */
    async sync(snippetId: number, removed: string[], changed: IndexedFile[]): Promise<void> {
      const paths = [...removed, ...changed.map((f) => f.path)];
      if (paths.length)
        await db
          .deleteFrom('snippet_file_text')
          .where('snippet_id', '=', snippetId)
          .where('path', 'in', paths)
          .execute();
      if (changed.length)
        await db
          .insertInto('snippet_file_text')
          .values(await textRows(db, snippetId, changed))
          .execute();
    },
    async deleteSnippet(snippetId: number): Promise<void> {
      await db.deleteFrom('snippet_file_text').where('snippet_id', '=', snippetId).execute();
    },
    /** The ids of snippets with a file whose path or content holds `text` (three characters or more), any case. */
    snippetsHolding(text: string) {
      if (dialect === 'sqlite') {
        const rowids = sql`SELECT rowid FROM snippet_file_text_fts WHERE snippet_file_text_fts MATCH ${ftsPhrase(text)}`;
        return db.selectFrom('snippet_file_text').select('snippet_id').where(sql<boolean>`id IN (${rowids})`);
      }
      const pattern = likePattern(text);
      return db
        .selectFrom('snippet_file_text')
        .select('snippet_id')
        .where(sql<boolean>`(path ILIKE ${pattern} OR content ILIKE ${pattern})`);
    },
    /**
     * SQLite only: the ids of snippets whose title, description or file name hold every text (three characters
     * or more each, any case), maybe not all in one field: a narrowing the exact conditions then check.
     */
    snippetsWithFields(texts: string[]) {
      return sql`SELECT rowid FROM snippet_fields_fts WHERE snippet_fields_fts MATCH ${texts.map(ftsPhrase).join(' AND ')}`;
    },
    /** The ids of snippets whose title or description holds `text` (three characters or more), any case. */
    snippetsWithFieldsHolding(text: string) {
      if (dialect === 'sqlite')
        return sql`SELECT rowid AS id FROM snippet_fields_fts WHERE snippet_fields_fts MATCH ${`{title description}: ${ftsPhrase(text)}`}`;
      const pattern = likePattern(text.toLowerCase());
      return sql`SELECT id FROM snippets WHERE lower(coalesce(title, '')) LIKE ${pattern}
        OR lower(coalesce(description, '')) LIKE ${pattern}`;
    },
    /** The files of the outer query's snippet whose path or text holds `text`, read through the snippet's rows. */
    filesOfSnippetHolding(text: string) {
      const pattern = likePattern(text.toLowerCase());
      return db
        .selectFrom('snippet_file_text as ft')
        .select('ft.id')
        .where(sql<boolean>`ft.snippet_id = snippets.id`)
        .where(
          sql<boolean>`(lower(ft.path) LIKE ${pattern} ESCAPE '\\' OR lower(ft.content) LIKE ${pattern} ESCAPE '\\')`,
        );
    },
    /**
     * Whether `texts` (each three characters or more) are all in at least `many` indexed snippets' fields (or, with
     * `files`, one of them in that many files): counted through the index, stopping at `many`.
     */
    async isCommon(texts: string[], many: number, files: boolean): Promise<boolean> {
      if (dialect === 'postgres') {
        const patterns = texts.map((t) => likePattern(t.toLowerCase()));
        const holds = (column: string) =>
          sql.join(
            patterns.map((p) => sql`lower(coalesce(${sql.ref(column)}, '')) LIKE ${p}`),
            sql` AND `,
          );
        // The files' GIN indexes are on the columns themselves (ILIKE), the fields' on lower(coalesce(…)).
        const fileHolds = (column: string) =>
          sql.join(
            texts.map((t) => sql`${sql.ref(column)} ILIKE ${likePattern(t)}`),
            sql` AND `,
          );
        const rows = files
          ? sql`SELECT 1 FROM snippet_file_text WHERE (${fileHolds('path')}) OR (${fileHolds('content')})`
          : sql`SELECT 1 FROM snippets WHERE (${holds('title')}) OR (${holds('description')}) OR (${holds('file_name')})`;
        const { rows: counted } = await sql<{
          n: number;
        }>`SELECT count(*) AS n FROM (${rows} LIMIT ${many}) AS x`.execute(db);
        return Number(counted[0].n) >= many;
      }
      const phrase = texts.map(ftsPhrase).join(' AND ');
      const table = sql.raw(files ? 'snippet_file_text_fts' : 'snippet_fields_fts');
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM (SELECT rowid FROM ${table}
        WHERE ${table} MATCH ${phrase} LIMIT ${many})`.execute(db);
      return Number(rows[0].n) >= many;
    },
    /** The indexed files of some snippets, with their text ('' for binary and oversized ones). */
    async files(snippetIds: number[]) {
      if (!snippetIds.length) return [];
      return db
        .selectFrom('snippet_file_text')
        .select(['snippet_id', 'path', 'content'])
        .where('snippet_id', 'in', snippetIds)
        .execute();
    },
  };
}

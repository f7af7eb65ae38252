import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';
import { MARKED_TEXT } from '../tables/snippet-text.ts';

// PostgreSQL only: pg_trgm takes only letters and digits into its trigrams, so a searched text such as
// `beta(4` was looked for by the trigrams of `beta` and `4`, which most files hold: each of 235,000
// candidates was read and checked with ILIKE (0.5-1 s a search). Each file's text is now also kept lowercased
// with its ASCII punctuation as capital letters (tables/snippet-text.ts, MARKED_TEXT), and that is what the
// trigram index holds: trigrams span the punctuation, and a candidate is checked with a plain LIKE on the kept
// copy (computing the copy for each candidate instead cost 70 µs a file).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'postgres') return;
  const { rows } = await sql<{ schema: string }>`SELECT n.nspname AS schema FROM pg_extension e
    JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`.execute(db);
  const opclass = sql`${sql.id(rows[0].schema)}.gin_trgm_ops`;
  await sql`ALTER TABLE snippet_file_text
    ADD COLUMN marked_text text GENERATED ALWAYS AS (${MARKED_TEXT(sql.ref('content'))}) STORED`.execute(db);
  await sql`CREATE INDEX snippet_file_text_marked_trgm ON snippet_file_text USING gin (marked_text ${opclass})`.execute(
    db,
  );
  await sql`DROP INDEX snippet_file_text_content_trgm`.execute(db);
}

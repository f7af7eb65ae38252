import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

/** The tables a snippet's answers are read from besides the access tables: its row, its files, its branch. */
export const CONTENT_EPOCH_TABLES = ['snippets', 'snippet_files', 'git_refs'];

// Whole snippet answers (a snippet, a list of snippets, a raw file) are kept as the template answers are
// (http/kept-answers.ts), so a committed change to what they are read from moves a second epoch, row 2 of
// change_epoch ("content"), in the same transaction, a git push included (it moves a row of git_refs).
// Row 1 ("access", migration 0003) stays what the lookups of every request depend on: a snippet write
// drops the kept answers, not the token, project and settings lookups the next write needs again.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await sql`INSERT INTO change_epoch (id, value) VALUES (2, 1)`.execute(db);
  if (dialect === 'postgres') {
    // Deferred to commit as row 1's triggers are, and once per transaction (a transaction-local setting
    // holds the id of the transaction that bumped it, so no value set for a whole session can stop a bump):
    // a snippet's create changes a row of each table and one of snippet_files per file.
    await sql`CREATE FUNCTION bump_content_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('snippetd.content_epoch_bumped_by', true) IS DISTINCT FROM txid_current()::text THEN
          UPDATE change_epoch SET value = value + 1 WHERE id = 2;
          PERFORM set_config('snippetd.content_epoch_bumped_by', txid_current()::text, true);
        END IF;
        RETURN NULL;
      END $$`.execute(db);
    for (const table of CONTENT_EPOCH_TABLES) {
      await sql`CREATE CONSTRAINT TRIGGER ${sql.raw(`${table}_content_epoch`)}
        AFTER INSERT OR UPDATE OR DELETE ON ${sql.table(table)}
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_content_epoch()`.execute(db);
    }
    return;
  }
  for (const table of CONTENT_EPOCH_TABLES) {
    for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
      await sql`CREATE TRIGGER ${sql.raw(`${table}_${event.toLowerCase()}_content_epoch`)} AFTER ${sql.raw(event)} ON ${sql.table(table)}
        BEGIN UPDATE change_epoch SET value = value + 1 WHERE id = 2; END`.execute(db);
    }
  }
}

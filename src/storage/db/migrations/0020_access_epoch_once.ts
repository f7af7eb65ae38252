import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// PostgreSQL: the access epoch (row 1 of change_epoch, migration 0003) moves once per transaction, as the
// content epoch does (0014), not once per row changed. Each update of the one row leaves a version of it the
// next update walks past, so a group rename that renamed 20,000 subgroups spent 2.5 s in its commit, every
// write to an access table waiting behind it. SQLite updates the row in place: its triggers stay.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE OR REPLACE FUNCTION bump_change_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('snippetd.access_epoch_bumped_by', true) IS DISTINCT FROM txid_current()::text THEN
        UPDATE change_epoch SET value = value + 1 WHERE id = 1;
        PERFORM set_config('snippetd.access_epoch_bumped_by', txid_current()::text, true);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
}

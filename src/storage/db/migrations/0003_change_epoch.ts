import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

/** The tables whose rows decide who may read what; a committed change to any of them moves the epoch. */
export const EPOCH_TABLES = [
  'users',
  'personal_access_tokens',
  'namespaces',
  'projects',
  'members',
  'application_settings',
];

// One counter that every committed change to the access tables increases, in the same transaction as the
// change. Each node reads it at the start of a request and drops its in-memory lookups when it moved
// (see ../read-cache.ts), so a change made on any node or by the CLI is never served stale.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await sql`CREATE TABLE change_epoch (id integer PRIMARY KEY, value bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO change_epoch (id, value) VALUES (1, 1)`.execute(db);
  if (dialect === 'postgres') {
    await sql`CREATE FUNCTION bump_change_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN UPDATE change_epoch SET value = value + 1 WHERE id = 1; RETURN NULL; END $$`.execute(db);
    for (const table of EPOCH_TABLES) {
      // Deferred to commit: the epoch row is the last lock a transaction takes, so it cannot deadlock
      // with the rows the transaction wrote, and the new value becomes visible with the change itself.
      await sql`CREATE CONSTRAINT TRIGGER ${sql.raw(`${table}_change_epoch`)}
        AFTER INSERT OR UPDATE OR DELETE ON ${sql.table(table)}
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_change_epoch()`.execute(db);
    }
    return;
  }
  for (const table of EPOCH_TABLES) {
    for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
      await sql`CREATE TRIGGER ${sql.raw(`${table}_${event.toLowerCase()}_change_epoch`)} AFTER ${sql.raw(event)} ON ${sql.table(table)}
        BEGIN UPDATE change_epoch SET value = value + 1 WHERE id = 1; END`.execute(db);
    }
  }
}

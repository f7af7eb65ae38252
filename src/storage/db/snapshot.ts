// Snapshots of an in-memory SQLite database (ephemeral mode only): a copy of every table in a database
// attached beside it, copied back in one transaction. A test suite's reset costs a few milliseconds this
// way, where rebuilding the database and seeding it again would cost a start-up.
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The epoch is left as it is and then moved on: a restore is a change, and read caches must see one. */
const KEPT_AS_IS = new Set(['change_epoch']);
/** SQLite's next id per table: restored too, so the ids after a reset are the ids after the start. */
const SEQUENCES = 'sqlite_sequence';

/**
 * SQLite's search index (search-indexing.ts) says what its FTS tables hold, which a restore leaves as they
 * are: it follows the rows through their triggers instead, as the FTS tables do.
 */
const SEARCH_INDEX = new Set(['search_index_queue', 'search_index_pieces']);

async function tablesOf(db: Db): Promise<string[]> {
  // Plain tables only: a full-text index (virtual, with its shadow tables) follows its rows through their
  // triggers as they are deleted and copied back.
  const { rows } = await sql<{ name: string }>`
    SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'
    ORDER BY name`.execute(db.kysely);
  return rows.map((r) => r.name).filter((name) => !KEPT_AS_IS.has(name) && !SEARCH_INDEX.has(name));
}

const schemaName = (name: string) => {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`snapshot name ${name} must be lower-case letters`);
  return sql.raw(`snapshot_${name}`);
};

/** Copies every table into the snapshot `name`, replacing an earlier one of that name. */
export async function saveSnapshot(db: Db, name: string): Promise<void> {
  if (db.dialect !== 'sqlite') throw new Error('snapshots are for in-memory SQLite databases only');
  const schema = schemaName(name);
  const attached = await sql<{ name: string }>`PRAGMA database_list`.execute(db.kysely);
  if (attached.rows.some((r) => r.name === `snapshot_${name}`)) await sql`DETACH DATABASE ${schema}`.execute(db.kysely);
  await sql`ATTACH DATABASE ':memory:' AS ${schema}`.execute(db.kysely);
  for (const table of await tablesOf(db))
    await sql`CREATE TABLE ${schema}.${sql.id(table)} AS SELECT * FROM main.${sql.id(table)}`.execute(db.kysely);
  await sql`CREATE TABLE ${schema}.sequences AS SELECT name, seq FROM main.${sql.raw(SEQUENCES)}`.execute(db.kysely);
}

/** The columns of `table`'s primary key, in key order; none when it has none, or one that may hold NULL. */
async function keyOf(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string; pk: number; notnull: number; type: string }>`
    SELECT name, pk, "notnull", type FROM pragma_table_info(${table}) WHERE pk > 0 ORDER BY pk`.execute(db.kysely);
  // SQLite lets NULL into a key column not declared NOT NULL (but the rowid's, INTEGER PRIMARY KEY), and a row value
  // with a NULL is in no IN list: such a table is copied back whole.
  const rowid = rows.length === 1 && rows[0].type.toUpperCase() === 'INTEGER';
  return rowid || rows.every((r) => r.notnull === 1) ? rows.map((r) => r.name) : [];
}

/**
 * Puts every table back as the snapshot `name` has it, in one transaction. Only the rows that differ are deleted
 * and copied back: a row left as it was fires no trigger, so the search index does not index again what the
 * snapshot's rows already had indexed (4 MB of seeded text took 720-760 ms of CPU after every reset).
 */
export async function restoreSnapshot(db: Db, name: string): Promise<void> {
  const schema = schemaName(name);
  const tables = await tablesOf(db);
  const keys = new Map(await Promise.all(tables.map(async (table) => [table, await keyOf(db, table)] as const)));
  await db.kysely.transaction().execute(async (tx) => {
    // Foreign keys are checked at commit; every row that goes is gone before any comes back, so no cascade removes
    // one.
    await sql`PRAGMA defer_foreign_keys = ON`.execute(tx);
    for (const table of tables) {
      const [main, saved] = [sql`main.${sql.id(table)}`, sql`${schema}.${sql.id(table)}`];
      const key = keys.get(table)!;
      if (key.length === 0) {
        await sql`DELETE FROM ${main}`.execute(tx);
        continue;
      }
      const columns = sql.join(key.map((c) => sql.id(c)));
      // The rows the snapshot has not, and those it has otherwise (EXCEPT takes NULLs in other columns as equal).
      await sql`DELETE FROM ${main} WHERE (${columns}) IN (SELECT ${columns} FROM (SELECT * FROM ${main} EXCEPT SELECT * FROM ${saved}))`.execute(
        tx,
      );
    }
    for (const table of tables) {
      const [main, saved] = [sql`main.${sql.id(table)}`, sql`${schema}.${sql.id(table)}`];
      const key = keys.get(table)!;
      if (key.length === 0) {
        await sql`INSERT INTO ${main} SELECT * FROM ${saved}`.execute(tx);
        continue;
      }
      const columns = sql.join(key.map((c) => sql.id(c)));
      await sql`INSERT INTO ${main} SELECT * FROM ${saved} WHERE (${columns}) NOT IN (SELECT ${columns} FROM ${main})`.execute(
        tx,
      );
    }
    await sql`DELETE FROM main.${sql.raw(SEQUENCES)}`.execute(tx);
    await sql`INSERT INTO main.${sql.raw(SEQUENCES)} SELECT name, seq FROM ${schema}.sequences`.execute(tx);
    await sql`UPDATE main.change_epoch SET value = value + 1`.execute(tx);
  });
}

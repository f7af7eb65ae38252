import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// A large object's body kept as parts of at most 256 KiB (storage/git/object-parts.ts): each part is
// written in a short statement of its own before the transaction that makes the object reachable, so no
// statement writes, and no commit flushes, a whole large body at once (on SQLite those ran on the event loop).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const binary = dialect === 'postgres' ? 'bytea' : 'blob';
  // A body being written: its row goes in the transaction that stores the object naming it, so a row left
  // here is a write that never committed, and its parts are removed (by its node's next start, or a day on).
  await db.schema
    .createTable('git_uploads')
    .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('git_object_parts')
    .addColumn('upload_id', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', binary, (c) => c.notNull())
    .addPrimaryKeyConstraint('git_object_parts_pk', ['upload_id', 'seq'])
    .execute();
  // The upload whose parts, joined in order, are the object's deflated body; its data is then empty.
  await db.schema.alterTable('git_objects').addColumn('parts', 'integer').execute();
}

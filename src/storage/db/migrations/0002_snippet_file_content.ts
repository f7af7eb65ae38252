import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// The bytes of each file at the snippet's head, so that get, list and raw of the current version are
// answered from the database without touching git.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable('snippet_files')
    .addColumn('content', dialect === 'postgres' ? 'bytea' : 'blob', (c) =>
      c.notNull().defaultTo(dialect === 'postgres' ? '\\x' : ''),
    )
    .execute();
  // The branch the snippet's repository was created with (files[].raw_url names it).
  await db.schema
    .alterTable('snippets')
    .addColumn('default_branch', 'text', (c) => c.notNull().defaultTo('main'))
    .execute();
}

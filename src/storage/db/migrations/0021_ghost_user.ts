import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// GitLab's ghost user (Users::Internal.ghost): made when a deleted user's project snippets need an author. The flag
// finds it again, whatever username it got.
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('ghost', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

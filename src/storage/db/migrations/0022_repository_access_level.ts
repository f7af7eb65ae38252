import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// GitLab's repository_access_level (ProjectFeature): who may use a project's repository, as snippets_access_level
// says who may use its snippets. Every project stored before it keeps what it had: enabled.
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('repository_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
    .execute();
}

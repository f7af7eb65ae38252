import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// A project's snippet list walks (project_id, id) newest first and keeps the visibilities the viewer may
// see. With the visibility in the index too, the walk over a deep offset never reads the table: the last
// of 100,000 pages costs an index scan, not 100,000 row lookups on the event loop (storage/db/page.ts).
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createIndex('snippets_project_list')
    .on('snippets')
    .columns(['project_id', 'id', 'visibility'])
    .execute();
  await db.schema.dropIndex('snippets_project_id').execute();
}

import type { Kysely } from 'kysely';

// A group page lists its subgroups by name, a page at a time (namespaces.childGroups): through this index, not
// a scan of every namespace of the instance.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('namespaces_children').on('namespaces').columns(['parent_id', 'name', 'id']).execute();
}

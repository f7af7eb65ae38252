import type { Kysely } from 'kysely';

// Counts the writes that moved a repository's refs, as `writes` counts those that added objects: a node's
// serving cache reads and writes the refs again only when the count moved (storage/git/serving-cache.ts),
// rather than at every clone and fetch (50,000 tags: 190-300 ms on the event loop each).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('git_repositories')
    .addColumn('refs_moved', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

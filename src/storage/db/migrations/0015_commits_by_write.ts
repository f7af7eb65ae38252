import { sql, type Kysely } from 'kysely';

// A repository's commits in the order they were written (GitRepository#readAhead): a walk through history
// reads its commits a batch at a time, newest write first, instead of one statement each. Commits only: the
// index stays small beside the trees and blobs.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX git_objects_commits_by_write ON git_objects (repository_id, write, oid) WHERE type = 1`.execute(
    db,
  );
}

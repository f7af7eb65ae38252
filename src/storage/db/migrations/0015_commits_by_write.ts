import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// A repository's commits in the order they were written (GitRepository#readAhead): on PostgreSQL a walk through
// history reads its commits a batch at a time, newest write first, instead of a round trip each. Commits only:
// the index stays small beside the trees and blobs. SQLite reads each commit alone (a statement there is a call
// in the process), so it keeps no such index: at a million snippets it would be about 30 MiB.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE INDEX git_objects_commits_by_write ON git_objects (repository_id, write, oid) WHERE type = 1`.execute(
    db,
  );
}

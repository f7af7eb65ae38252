// The git repositories of projects and snippets (migration 0005): one row each, with its objects and refs.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { FIRST_WRITE, GitRepository, insertObjects, oidBytes } from '../../git/repository.ts';
import type { GitObject } from '../../git/objects.ts';
import type { ObjectCache } from '../../git/object-cache.ts';
import { compiledOnce } from '../compiled-once.ts';

export type RepositoryKind = 'project' | 'snippet';

export function gitRepositoriesTable(db: Kysely<Database>, cache: ObjectCache) {
  // Every read of a snippet's files starts here.
  const byOwner = compiledOnce(db, 2, (kind: RepositoryKind, ownerId: number) =>
    db.selectFrom('git_repositories').selectAll().where('kind', '=', kind).where('owner_id', '=', ownerId),
  );
  return {
    async find(kind: RepositoryKind, ownerId: number): Promise<GitRepository | null> {
      const [row] = await byOwner(kind, ownerId);
      return row ? new GitRepository(db, row, cache) : null;
    },
    /** The repository, created empty with HEAD naming `head` when there is none yet. */
    async ensure(kind: RepositoryKind, ownerId: number, head: string): Promise<GitRepository> {
      // Read first: git requests ask for the repository of every project they touch, and most have one.
      const found = await this.find(kind, ownerId);
      if (found) return found;
      await db
        .insertInto('git_repositories')
        .values({ kind, owner_id: ownerId, head })
        .onConflict((c) => c.columns(['kind', 'owner_id']).doNothing())
        .execute();
      return (await this.find(kind, ownerId))!;
    },
    /**
     * A new repository holding `objects`, with `branch` (HEAD) at `commit`: three statements, for the
     * snippet create path. Call inside the transaction that creates its owner.
     */
    async create(
      kind: RepositoryKind,
      ownerId: number,
      branch: string,
      objects: readonly GitObject[],
      commit: string,
    ): Promise<GitRepository> {
      const row = await db
        .insertInto('git_repositories')
        .values({ kind, owner_id: ownerId, head: branch, writes: FIRST_WRITE })
        .returningAll()
        .executeTakeFirstOrThrow();
      await insertObjects(db, row.id, FIRST_WRITE, objects);
      await db
        .insertInto('git_refs')
        .values({ repository_id: row.id, name: `refs/heads/${branch}`, oid: oidBytes(commit) })
        .execute();
      return new GitRepository(db, row, cache);
    },
    /**
     * Removes the repository with all its objects and refs. Its row goes first: a write in progress holds
     * that row's lock (GitRepository.store), so the delete waits for it and then removes what it wrote; a
     * write that comes later finds no row and fails, rather than leaving objects no repository owns.
     */
    async delete(kind: RepositoryKind, ownerIds: number[]): Promise<void> {
      if (!ownerIds.length) return;
      const ids = (
        await db
          .deleteFrom('git_repositories')
          .where('kind', '=', kind)
          .where('owner_id', 'in', ownerIds)
          .returning('id')
          .execute()
      ).map((r) => r.id);
      if (!ids.length) return;
      await db
        .deleteFrom('git_object_parts')
        .where('upload_id', 'in', (eb) =>
          eb.selectFrom('git_objects').select('parts').where('repository_id', 'in', ids).where('parts', 'is not', null),
        )
        .execute();
      await db.deleteFrom('git_objects').where('repository_id', 'in', ids).execute();
      await db.deleteFrom('git_refs').where('repository_id', 'in', ids).execute();
    },
    /** Every repository, for fsck. */
    all() {
      return db.selectFrom('git_repositories').selectAll().orderBy('id').execute();
    },
  };
}

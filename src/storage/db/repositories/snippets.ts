import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Database, Snippet, SnippetsTable, Visibility } from '../schema.ts';
import { byteOrder } from '../../../order.ts';
import { containsText, fetchPage, type PageWindow } from '../page.ts';
import { setsNothing } from '../rows.ts';

/** A file of a snippet's head: its path, its blob and the blob's size (the bytes are in git_objects). */
export interface IndexedFile {
  path: string;
  blob_id: string;
  size: number;
}

/** Git's order of paths (byte order), which GitLab uses for `files`, `file_name` and raw. */
export const byPath = (a: { path: string }, b: { path: string }) => byteOrder(a.path, b.path);

/** private, internal, public. */
const ALL_VISIBILITIES = 3;

export function snippetsRepository(db: Kysely<Database>) {
  return {
    async insert(snippet: Insertable<SnippetsTable>): Promise<Snippet> {
      return db.insertInto('snippets').values(snippet).returningAll().executeTakeFirstOrThrow();
    },
    async findInProject(projectId: number, id: number): Promise<Snippet | undefined> {
      return db
        .selectFrom('snippets')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
    },
    /** Locks the row for the rest of the transaction (PostgreSQL); SQLite transactions are serialised anyway. */
    async lock(id: number, dialect: 'sqlite' | 'postgres'): Promise<Snippet | undefined> {
      const q = db.selectFrom('snippets').selectAll().where('id', '=', id);
      return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
    },
    /**
     * Snippets of every project (of one author, when given) with ids below `before`, newest first: to be
     * filtered by what a viewer may see.
     */
    newest(filter: { authorId?: number }, before: number | undefined, limit: number): Promise<Snippet[]> {
      let q = db.selectFrom('snippets').selectAll();
      if (filter.authorId !== undefined) q = q.where('author_id', '=', filter.authorId);
      if (before !== undefined) q = q.where('id', '<', before);
      return q.orderBy('id', 'desc').limit(limit).execute();
    },
    /**
     * The ids of a project's snippets, their rows locked for the rest of the transaction (PostgreSQL), in
     * id order: a delete then waits for a write in progress on any of them, which locks its snippet before
     * its repository, and never holds a repository a writer is waiting for.
     */
    async lockInProject(projectId: number, dialect: 'sqlite' | 'postgres'): Promise<number[]> {
      const q = db.selectFrom('snippets').select('id').where('project_id', '=', projectId).orderBy('id');
      const rows = await (dialect === 'postgres' ? q.forUpdate() : q).execute();
      return rows.map((r) => r.id);
    },
    /** One page of a project's snippets of the given visibilities, newest first, optionally by title. */
    listPage(projectId: number, levels: Visibility[], window: PageWindow, titleContains?: string) {
      let query = db.selectFrom('snippets').where('project_id', '=', projectId);
      // Every visibility (members, administrators): no filter, so a deep page walks the index by id alone.
      if (new Set(levels).size < ALL_VISIBILITIES) query = query.where('visibility', 'in', levels);
      if (titleContains) {
        query = query.where(containsText(sql.ref('title'), titleContains));
      }
      return fetchPage(db, query.selectAll().orderBy('id', 'desc'), window, 'snippets.id');
    },
    async update(id: number, changes: Updateable<SnippetsTable>): Promise<Snippet> {
      if (setsNothing(changes))
        return db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return db.updateTable('snippets').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('snippet_files').where('snippet_id', '=', id).execute();
      await db.deleteFrom('user_agent_details').where('snippet_id', '=', id).execute();
      await db.deleteFrom('snippets').where('id', '=', id).execute();
    },
    /** Paths of the files of several snippets (for presenting lists), in git's order. */
    async paths(snippetIds: number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>(snippetIds.map((id) => [id, []]));
      if (!snippetIds.length) return out;
      const rows = await db
        .selectFrom('snippet_files')
        .select(['snippet_id', 'path'])
        .where('snippet_id', 'in', snippetIds)
        .execute();
      rows.sort(byPath);
      for (const r of rows) out.get(r.snippet_id)!.push(r.path);
      return out;
    },
    /** The files of the snippet's head, in git's order. */
    async fileIndex(snippetId: number): Promise<IndexedFile[]> {
      const rows = await db
        .selectFrom('snippet_files')
        .select(['path', 'blob_id', 'size'])
        .where('snippet_id', '=', snippetId)
        .execute();
      return rows.sort(byPath);
    },
    /** Replaces the index of the head's files: unchanged ones stay, removed ones go, new and changed ones are written. */
    async syncFiles(snippetId: number, before: IndexedFile[], after: IndexedFile[]): Promise<void> {
      const old = new Map(before.map((f) => [f.path, f.blob_id]));
      const next = new Set(after.map((f) => f.path));
      const gone = before.filter((f) => !next.has(f.path)).map((f) => f.path);
      if (gone.length)
        await db.deleteFrom('snippet_files').where('snippet_id', '=', snippetId).where('path', 'in', gone).execute();
      const changed = after.filter((f) => old.get(f.path) !== f.blob_id);
      if (changed.length) {
        await db
          .insertInto('snippet_files')
          .values(changed.map((f) => ({ snippet_id: snippetId, path: f.path, blob_id: f.blob_id, size: f.size })))
          .onConflict((c) =>
            c.columns(['snippet_id', 'path']).doUpdateSet((eb) => ({
              blob_id: eb.ref('excluded.blob_id'),
              size: eb.ref('excluded.size'),
            })),
          )
          .execute();
      }
    },
    async insertUserAgentDetail(detail: {
      snippet_id: number;
      user_agent: string;
      ip_address: string;
      created_at: string;
    }): Promise<void> {
      await db
        .insertInto('user_agent_details')
        .values({ ...detail, submitted: 0 })
        .execute();
    },
    async userAgentDetail(snippetId: number) {
      return db.selectFrom('user_agent_details').selectAll().where('snippet_id', '=', snippetId).executeTakeFirst();
    },
  };
}

// How a snippet's rows are written: a new snippet (the snippet, its git repository with objects and branch,
// the index of its files, its user agent row) and a change to one (its row, and for a new commit its objects,
// its branch moved by compare-and-swap and its index), each all or nothing in one transaction, on either
// database. The repository's part is GitRepository's (storage/git/repository.ts), the index's the snippets
// table's: this file only says which of them a write takes, in which order.
import type { Insertable, Kysely, Updateable } from 'kysely';
import type { Database, Snippet, SnippetsTable } from './schema.ts';
import { byPath, type IndexedFile } from './tables/snippets.ts';
import type { Store } from './store.ts';
import { GitRepository } from '../git/repository.ts';
import type { GitObject } from '../git/objects.ts';
import { withUploads } from '../git/object-parts.ts';

export interface NewSnippet {
  row: Insertable<SnippetsTable>;
  /** Its repository: HEAD names `branch`, which points at `commit`; `objects` are the commit's. */
  repository: { branch: string; commit: string; objects: readonly GitObject[] };
  files: IndexedFile[];
  /** The largest file whose text the search index takes (the instance's setting). */
  indexedFileMaxBytes: number;
  userAgent: { user_agent: string; ip_address: string; created_at: string } | null;
}

export async function insertNewSnippet(store: Store, s: NewSnippet): Promise<Snippet> {
  return withUploads(store.kysely, async (upload) => {
    const objects = await uploadLargeBodies(s.repository.objects, upload);
    return store.transaction(async (tx) => {
      const snippet = await tx.snippets.insert(s.row);
      await tx.git.create('snippet', snippet.id, s.repository.branch, objects, s.repository.commit);
      await tx.snippets.syncFiles(snippet.id, [], s.files, s.indexedFileMaxBytes, blobBodies(s.repository.objects));
      if (s.userAgent) await tx.snippets.insertUserAgentDetail({ snippet_id: snippet.id, ...s.userAgent });
      return snippet;
    });
  });
}

/** The contents of the blobs among `objects`, by id: the search index's text is taken from them, not read back. */
const blobBodies = (objects: readonly GitObject[]) =>
  new Map(objects.filter((o) => o.type === 'blob').map((o) => [o.id, o.body]));

/** The objects with each large deflated body written as parts first (object-parts.ts), outside the transaction. */
async function uploadLargeBodies(
  objects: readonly GitObject[],
  upload: (deflated: Buffer) => Promise<number | undefined>,
): Promise<GitObject[]> {
  const out: GitObject[] = [];
  for (const o of objects) {
    const parts = o.deflated && (await upload(o.deflated));
    out.push(parts ? { id: o.id, type: o.type, body: o.body, parts } : o);
  }
  return out;
}

// --- a change to a snippet -----------------------------------------------------------------------------------

/** What a change to a snippet is computed from: its row, the index of its head's files and its repository. */
export interface SnippetState {
  snippet: Snippet;
  index: IndexedFile[];
  /** null only for a snippet of an earlier version whose repository was never made (legacy-repositories.ts). */
  repository: GitRepository | null;
}

/**
 * The project's snippet, read in one statement so that its index is the one of the head its row names;
 * undefined when there is none.
 */
export async function readSnippetState(
  store: Store,
  projectId: number | null,
  id: number,
): Promise<SnippetState | undefined> {
  const rows = await store.kysely
    .selectFrom('snippets as s')
    .leftJoin('git_repositories as r', (join) => join.on('r.kind', '=', 'snippet').onRef('r.owner_id', '=', 's.id'))
    .leftJoin('snippet_files as f', 'f.snippet_id', 's.id')
    .selectAll('s')
    .select(['r.id as repository_id', 'r.head as repository_head', 'r.writes as repository_writes'])
    .select(['f.path', 'f.blob_id', 'f.size'])
    .where('s.id', '=', id)
    .where('s.project_id', projectId === null ? 'is' : '=', projectId)
    .execute();
  if (!rows.length) return undefined;
  const { repository_id, repository_head, repository_writes, path: _p, blob_id: _b, size: _s, ...snippet } = rows[0];
  const index = rows
    .filter((r) => r.path !== null)
    .map((r) => ({ path: r.path!, blob_id: r.blob_id!, size: r.size! }))
    .sort(byPath);
  const repository =
    repository_id === null
      ? null
      : new GitRepository(
          store.kysely,
          { id: repository_id, kind: 'snippet', owner_id: id, head: repository_head!, writes: repository_writes! },
          store.objects,
        );
  return { snippet, index, repository };
}

/** A change computed from `from`: new values of the snippet's row and, when its files change, their new commit. */
export interface SnippetChange {
  from: SnippetState;
  row: Updateable<SnippetsTable>;
  /**
   * The commit on top of the head, with the index of its files and the largest file whose text the search
   * index takes (the instance's setting); HEAD's branch moves to it.
   */
  commit: { id: string; objects: readonly GitObject[]; files: IndexedFile[]; indexedFileMaxBytes: number } | null;
  /**
   * An edit made from one version of the snippet (the page's base_version): written only while nothing of it
   * changed since `from` was read, its fields included, not only its head.
   */
  fromVersion: boolean;
}

/**
 * Writes the change only while the snippet's head is still the one it was computed from (a compare-and-swap
 * on the row's head and on the branch; with `fromVersion`, on its updated_at too): the snippet as written, or
 * undefined when it moved on or went since `from` was read, and nothing was written. The caller reads it again
 * and recomputes.
 */
export async function writeSnippetChange(store: Store, change: SnippetChange): Promise<Snippet | undefined> {
  const { from, row, commit } = change;
  const head = from.snippet.head_commit;
  const writeRow = (db: Kysely<Database>) => {
    let q = db
      .updateTable('snippets')
      .set(row)
      .where('id', '=', from.snippet.id)
      .where('head_commit', head === null ? 'is' : '=', head);
    if (change.fromVersion) q = q.where('updated_at', '=', from.snippet.updated_at);
    return q.returningAll().executeTakeFirst();
  };
  // The row alone (title, description, visibility): one statement, atomic on its own.
  if (!commit) return writeRow(store.kysely);
  if (!from.repository) throw new Error(`snippet ${from.snippet.id} has no repository`);
  return withUploads(store.kysely, async (upload) => {
    const objects = await uploadLargeBodies(commit.objects, upload);
    return store.transaction(async (tx) => {
      const written = await writeRow(tx.kysely);
      if (!written) return undefined;
      const repo = from.repository!.on(tx.kysely);
      await repo.commitToBranch(repo.head, head, commit.id, objects);
      await tx.snippets.syncFiles(
        from.snippet.id,
        from.index,
        commit.files,
        commit.indexedFileMaxBytes,
        blobBodies(commit.objects),
      );
      return written;
    });
  });
}

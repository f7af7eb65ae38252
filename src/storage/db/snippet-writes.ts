// How a snippet's rows are written: a new snippet (the snippet, its git repository with objects and branch,
// the index of its files, its user agent row) and a change to one (its row, and for a new commit its objects,
// its branch moved by compare-and-swap and its index), each all or nothing. On PostgreSQL every statement is
// a round trip, so each write is one statement of data-modifying WITH clauses (atomic on its own, no
// BEGIN/COMMIT); SQLite's statements cost no round trip, and it writes them one after the other in a
// transaction.
import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Database, Snippet, SnippetsTable } from './schema.ts';
import { byPath, type IndexedFile } from './tables/snippets.ts';
import type { Store } from './store.ts';
import { FIRST_WRITE, GitRepository, objectRows, oidBytes } from '../git/repository.ts';
import type { GitObject } from '../git/objects.ts';

export interface NewSnippet {
  row: Insertable<SnippetsTable>;
  /** Its repository: HEAD names `branch`, which points at `commit`; `objects` are the commit's. */
  repository: { branch: string; commit: string; objects: readonly GitObject[] };
  files: IndexedFile[];
  userAgent: { user_agent: string; ip_address: string; created_at: string } | null;
}

/** Rows of objects and files one statement takes: well under PostgreSQL's 65,535 parameters. */
const ONE_STATEMENT_ROWS = 2000;

export async function insertNewSnippet(store: Store, s: NewSnippet): Promise<Snippet> {
  if (store.db.dialect === 'postgres' && s.repository.objects.length + s.files.length <= ONE_STATEMENT_ROWS)
    return insertInOneStatement(store, s);
  return store.transaction(async (tx) => {
    const snippet = await tx.snippets.insert(s.row);
    await tx.git.create('snippet', snippet.id, s.repository.branch, s.repository.objects, s.repository.commit);
    await tx.snippets.syncFiles(snippet.id, [], s.files);
    if (s.userAgent) await tx.snippets.insertUserAgentDetail({ snippet_id: snippet.id, ...s.userAgent });
    return snippet;
  });
}

/** The same rows as above; the repository's and the snippet's ids come from the clauses that insert them. */
function insertInOneStatement(store: Store, s: NewSnippet): Promise<Snippet> {
  const { branch, commit, objects } = s.repository;
  return store.kysely
    .with('s', (db) => db.insertInto('snippets').values(s.row).returningAll())
    .with('r', (db) =>
      db
        .insertInto('git_repositories')
        .columns(['kind', 'owner_id', 'head', 'writes'])
        .expression((eb) =>
          eb
            .selectFrom('s')
            .select((eb) => [
              eb.val('snippet').as('kind'),
              'id',
              eb.val(branch).as('head'),
              eb.lit(FIRST_WRITE).as('writes'),
            ]),
        )
        .returning('id'),
    )
    .with('o', (db) =>
      db
        .insertInto('git_objects')
        .values(
          objectRows(FIRST_WRITE, objects).map((o) => ({ ...o, repository_id: db.selectFrom('r').select('id') })),
        ),
    )
    .with('g', (db) =>
      db.insertInto('git_refs').values({
        repository_id: db.selectFrom('r').select('id'),
        name: `refs/heads/${branch}`,
        oid: oidBytes(commit),
      }),
    )
    .with('f', (db) =>
      db
        .insertInto('snippet_files')
        .values(s.files.map((f) => ({ ...f, snippet_id: db.selectFrom('s').select('id') }))),
    )
    .with('u', (db) =>
      db
        .insertInto('user_agent_details')
        .columns(['snippet_id', 'user_agent', 'ip_address', 'created_at', 'submitted'])
        .expression((eb) =>
          eb
            .selectFrom('s')
            .select((eb) => [
              'id',
              eb.val(s.userAgent?.user_agent ?? '').as('user_agent'),
              eb.val(s.userAgent?.ip_address ?? '').as('ip_address'),
              eb.val(s.userAgent?.created_at ?? '').as('created_at'),
              eb.lit(0).as('submitted'),
            ])
            .where(eb.lit(s.userAgent !== null)),
        ),
    )
    .selectFrom('s')
    .selectAll()
    .executeTakeFirstOrThrow();
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
  /** The commit on top of the head, with the index of its files; HEAD's branch moves to it. */
  commit: { id: string; objects: readonly GitObject[]; files: IndexedFile[] } | null;
}

/**
 * Writes the change only while the snippet's head is still the one it was computed from (a compare-and-swap
 * on the row's head and on the branch): the snippet as written, or undefined when it moved on or went since
 * `from` was read, and nothing was written. The caller reads it again and recomputes.
 */
export async function writeSnippetChange(store: Store, change: SnippetChange): Promise<Snippet | undefined> {
  const { from, row, commit } = change;
  const head = from.snippet.head_commit;
  const writeRow = (db: Kysely<Database>) =>
    db
      .updateTable('snippets')
      .set(row)
      .where('id', '=', from.snippet.id)
      .where('head_commit', head === null ? 'is' : '=', head)
      .returningAll()
      .executeTakeFirst();
  // The row alone (title, description, visibility): one statement, atomic on its own.
  if (!commit) return writeRow(store.kysely);
  if (!from.repository) throw new Error(`snippet ${from.snippet.id} has no repository`);
  // A snippet without a commit yet (from an earlier version) is rare: its branch is created, not moved.
  if (store.db.dialect === 'postgres' && head !== null) return writeCommitInOneStatement(store, change, commit, head);
  return store.transaction(async (tx) => {
    const written = await writeRow(tx.kysely);
    if (!written) return undefined;
    const repo = from.repository!.on(tx.kysely);
    await repo.commitToBranch(repo.head, head, commit.id, commit.objects);
    await tx.snippets.syncFiles(from.snippet.id, from.index, commit.files);
    return written;
  });
}

/**
 * The same writes as above in one statement. Its first clause locks the snippet's row if it still names the
 * head (as a push does, so the two never wait for each other's locks in opposite orders); every other clause
 * writes only if the branch moved, so a statement that loses either compare-and-swap writes nothing.
 */
async function writeCommitInOneStatement(
  store: Store,
  { from, row }: SnippetChange,
  commit: NonNullable<SnippetChange['commit']>,
  head: string,
): Promise<Snippet | undefined> {
  const id = from.snippet.id;
  const assignments = sql.join(Object.entries(row).map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
  const repo = from.repository!;
  const objects = objectRows(0, commit.objects); // their write count comes from the clause that takes it
  const after = new Map(commit.files.map((f) => [f.path, f.blob_id]));
  const gone = from.index.filter((f) => !after.has(f.path)).map((f) => f.path);
  const before = new Map(from.index.map((f) => [f.path, f.blob_id]));
  const changed = commit.files.filter((f) => before.get(f.path) !== f.blob_id);
  const { rows } = await sql<Snippet>`
    WITH locked AS (
      SELECT id FROM snippets WHERE id = ${id} AND head_commit = ${head} FOR UPDATE
    ), moved AS (
      UPDATE git_refs SET oid = ${oidBytes(commit.id)}
      WHERE repository_id = ${repo.id} AND name = ${`refs/heads/${repo.head}`}
        AND oid = ${oidBytes(head)} AND EXISTS (SELECT 1 FROM locked)
      RETURNING 1
    ), written AS (
      UPDATE snippets SET ${assignments} WHERE id = ${id} AND EXISTS (SELECT 1 FROM moved) RETURNING *
    ), counted AS (
      UPDATE git_repositories SET writes = writes + 1
      WHERE id = ${repo.id} AND EXISTS (SELECT 1 FROM moved) RETURNING writes
    ), stored AS (
      INSERT INTO git_objects (repository_id, oid, type, size, write, data)
      SELECT ${repo.id}, o.oid, o.type, o.size, counted.writes, o.data
      FROM counted, unnest(
        ${objects.map((o) => o.oid)}::bytea[], ${objects.map((o) => o.type)}::int[],
        ${objects.map((o) => o.size)}::int[], ${objects.map((o) => o.data)}::bytea[]
      ) AS o(oid, type, size, data)
      ON CONFLICT (repository_id, oid) DO NOTHING
    ), removed AS (
      DELETE FROM snippet_files WHERE snippet_id IN (SELECT id FROM written) AND path = ANY(${gone}::text[])
    ), indexed AS (
      INSERT INTO snippet_files (snippet_id, path, blob_id, size)
      SELECT written.id, f.path, f.blob_id, f.size
      FROM written, unnest(
        ${changed.map((f) => f.path)}::text[], ${changed.map((f) => f.blob_id)}::text[],
        ${changed.map((f) => f.size)}::int[]
      ) AS f(path, blob_id, size)
      ON CONFLICT (snippet_id, path) DO UPDATE SET blob_id = excluded.blob_id, size = excluded.size
    )
    SELECT * FROM written`.execute(store.kysely);
  return rows[0];
}

// How a new snippet's rows are written: the snippet, its git repository (objects and branch), the index of
// its files and its user agent row, all or nothing. On PostgreSQL every statement is a round trip, so the
// rows go in one statement (data-modifying WITH clauses: atomic on its own, no BEGIN/COMMIT); SQLite's
// statements cost no round trip, and it writes them one after the other in a transaction.
import type { Insertable } from 'kysely';
import type { Snippet, SnippetsTable } from './schema.ts';
import type { IndexedFile } from './repositories/snippets.ts';
import type { Store } from './store.ts';
import { FIRST_WRITE, objectRows, oidBytes } from '../git/repository.ts';
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

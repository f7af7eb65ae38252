// The storage facade the domain uses: one repository per table group over one database.
import type { Kysely } from 'kysely';
import type { Db, DialectName } from './database.ts';
import type { Database } from './schema.ts';
import type { KeepRules } from './read-cache.ts';
import { usersTable } from './tables/users.ts';
import { tokensTable } from './tables/tokens.ts';
import { namespacesTable } from './tables/namespaces.ts';
import { projectsTable } from './tables/projects.ts';
import { membersTable } from './tables/members.ts';
import { settingsTable } from './tables/settings.ts';
import { snippetsTable } from './tables/snippets.ts';
import { sessionsTable } from './tables/sessions.ts';
import { identitiesTable } from './tables/identities.ts';
import { gitRepositoriesTable } from './tables/git.ts';
import { ObjectCache } from '../git/object-cache.ts';

/**
 * `reads`: where long reads go (Db.reader), `searches` where searches' go (Db.searcher), or `k` itself within a
 * transaction, whose reads must see its writes.
 */
function repositories(
  k: Kysely<Database>,
  objects: ObjectCache,
  dialect: DialectName,
  reads: Kysely<Database>,
  searches: Kysely<Database>,
) {
  return {
    users: usersTable(k, dialect),
    tokens: tokensTable(k, dialect),
    namespaces: namespacesTable(k, dialect, reads),
    projects: projectsTable(k, dialect, reads),
    members: membersTable(k, dialect, reads),
    settings: settingsTable(k),
    snippets: snippetsTable(k, dialect, reads, searches),
    sessions: sessionsTable(k),
    identities: identitiesTable(k),
    git: gitRepositoriesTable(k, objects),
  };
}

export type Store = ReturnType<typeof repositories> & {
  db: Db;
  kysely: Kysely<Database>;
  /** The git objects this store has read (storage/git/object-cache.ts), shared by its transactions. */
  objects: ObjectCache;
  /**
   * A value derived from database reads only, kept by the read cache while the database is unchanged
   * (read requests); computed anew every time otherwise. `key` must name everything the value depends on,
   * and start with a word of its own (`readable-project:`), unlike the repositories' keys (read-cache.ts).
   * `rules` may refuse a value that turned out to depend on more than the database, and say its size.
   */
  memo<T>(key: string, load: () => Promise<T>, rules?: KeepRules<T>): Promise<T>;
  /**
   * A whole answer (http/kept-answers.ts), kept as `memo` keeps a value but dropped by a change to the
   * snippet tables too (the content epoch). `rules.since` must be the generation the request saw when its
   * epochs were read (ReadCache.generation), since an answer also depends on what the request read before
   * `load` ran (its caller, its project).
   */
  memoAnswer<T>(key: string, load: () => Promise<T>, rules: KeepRules<T> & { since: number | null }): Promise<T>;
  /** Runs `work` in one transaction with repositories bound to it (transactions do not nest). */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * Runs reads that must agree with each other: on PostgreSQL in one read-only snapshot (repeatable read);
   * on SQLite as they come, since this store's SQLite transactions are IMMEDIATE and would hold the write
   * lock (a reader checks twice instead).
   */
  snapshot<T>(work: (s: Store) => Promise<T>): Promise<T>;
};

export function createStore(db: Db, k: Kysely<Database> = db.kysely, objects = new ObjectCache()): Store {
  return {
    db,
    kysely: k,
    objects,
    ...repositories(k, objects, db.dialect, k === db.kysely ? db.reader : k, k === db.kysely ? db.searcher : k),
    memo: (_key, load) => load(),
    memoAnswer: (_key, load) => load(),
    transaction: (work) => k.transaction().execute((tx) => work(createStore(db, tx, objects))),
    snapshot: (work) =>
      db.dialect === 'sqlite'
        ? work(createStore(db, k, objects))
        : k
            .transaction()
            .setIsolationLevel('repeatable read')
            .setAccessMode('read only')
            .execute((tx) => work(createStore(db, tx, objects))),
  };
}

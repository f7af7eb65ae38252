import { sql, type Kysely } from 'kysely';
import type { Database, NewUser, User, UserUpdate } from '../schema.ts';
import type { DialectName } from '../database.ts';
import { containsText, fetchPage, type PageWindow } from '../page.ts';
import { setsNothing } from '../rows.ts';

/** GET /users's filters (GitLab's UsersFinder). */
export interface UserListFilter {
  username?: string;
  /** In the name or username, or the whole email: the public one, any for administrators. */
  search?: string;
  searchesEmails: boolean;
  withBlocked: boolean;
  active?: boolean;
  blocked?: boolean;
  external?: boolean;
}

/**
 * GitLab's search of users (UsersFinder, and the members lists' `query`): the name or the username holds the text,
 * in any case, or the email (`email`: the public one, or any) is the text whole. `table`: the users' alias.
 */
export const userMatches = (dialect: DialectName, search: string, table: string, email: 'email' | 'public_email') =>
  sql<boolean>`(${containsText(dialect, sql.ref(`${table}.name`), search)} OR ${containsText(
    dialect,
    sql.ref(`${table}.username`),
    search,
  )} OR lower(${sql.ref(`${table}.${email}`)}) = ${search.toLowerCase()})`;

export function usersTable(db: Kysely<Database>, dialect: DialectName) {
  return {
    async insert(user: NewUser): Promise<User> {
      return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
    },
    async findById(id: number): Promise<User | undefined> {
      return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async findByUsername(username: string): Promise<User | undefined> {
      return db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
        .executeTakeFirst();
    },
    async findByEmail(email: string): Promise<User | undefined> {
      // The database's lower() on both sides, as the unique index users_email_lower: SQLite's changes only ASCII.
      return db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['email']), '=', eb.fn('lower', [eb.val(email)])))
        .executeTakeFirst();
    },
    /** Makes a deactivated user active; undefined when the user is not deactivated (now). */
    async reactivate(id: number): Promise<User | undefined> {
      return db
        .updateTable('users')
        .set({ state: 'active' })
        .where('id', '=', id)
        .where('state', '=', 'deactivated')
        .returningAll()
        .executeTakeFirst();
    },
    /** Locks the user's row for the rest of the transaction (PostgreSQL; SQLite's transactions run one at a time). */
    async lock(id: number): Promise<User | undefined> {
      const q = db.selectFrom('users').selectAll().where('id', '=', id);
      return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
    },
    /** GitLab's ghost user, when one has been made (domain/user-removal.ts). */
    async findGhost(): Promise<User | undefined> {
      return db.selectFrom('users').selectAll().where('ghost', '=', 1).orderBy('id').executeTakeFirst();
    },
    /** Removes the user; their tokens, sessions, identities and sign-in failures go with it (the schema's cascades). */
    async delete(id: number): Promise<void> {
      await db.deleteFrom('users').where('id', '=', id).execute();
    },
    /** The user as changed; undefined when there is no such user (deleted meanwhile). */
    async update(id: number, changes: UserUpdate): Promise<User | undefined> {
      if (setsNothing(changes)) return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
    },
    async count(): Promise<number> {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    /**
     * One page of users, newest first, optionally filtered by exact (case-insensitive) username, and without
     * blocked users for those who may not see them.
     */
    listPage(filter: UserListFilter, window: PageWindow) {
      let q = db.selectFrom('users');
      if (!filter.withBlocked) q = q.where('state', '!=', 'blocked');
      if (filter.username !== undefined) {
        q = q.where((eb) => eb(eb.fn('lower', ['username']), '=', filter.username!.toLowerCase()));
      }
      if (filter.search) {
        const search = filter.search;
        q = q.where(userMatches(dialect, search, 'users', filter.searchesEmails ? 'email' : 'public_email'));
      }
      if (filter.active) q = q.where('state', '=', 'active');
      if (filter.blocked) q = q.where('state', '=', 'blocked');
      if (filter.external) q = q.where('external', '=', 1);
      return fetchPage(db, q.selectAll().orderBy('id', 'desc'), window);
    },
  };
}

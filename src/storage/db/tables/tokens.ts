import { type Kysely, sql } from 'kysely';
import type { Database, Token, User } from '../schema.ts';
import type { DialectName } from '../database.ts';
import { containsText, fetchPage, type PageWindow } from '../page.ts';

/** GET /personal_access_tokens's filters (GitLab's PersonalAccessTokensFinder). */
export interface TokenListFilter {
  userId?: number;
  revoked?: boolean;
  /** In use (neither revoked nor expired on `today`), or not. */
  inUse?: { is: boolean; today: string };
  createdBefore?: string;
  createdAfter?: string;
  lastUsedBefore?: string;
  lastUsedAfter?: string;
  /** Dates (YYYY-MM-DD), as expires_at is one. */
  expiresBefore?: string;
  expiresAfter?: string;
  /** In the name, any case. */
  search?: string;
}

/** 1 for a token neither revoked nor expired on `today`, else 0. */
const inUseOn = (today: string) =>
  sql<number>`case when revoked = 0 and (expires_at is null or expires_at > ${today}) then 1 else 0 end`;

const USER_COLUMNS = [
  'id',
  'username',
  'email',
  'name',
  'public_email',
  'state',
  'admin',
  'external',
  'bot',
  'ghost',
  'password_digest',
  'namespace_id',
  'created_at',
] as const satisfies readonly (keyof User)[];
const TOKEN_COLUMNS = [
  'id',
  'user_id',
  'name',
  'token_digest',
  'scopes',
  'expires_at',
  'revoked',
  'created_at',
  'last_used_at',
] as const satisfies readonly (keyof Token)[];

export function tokensTable(db: Kysely<Database>, dialect: DialectName) {
  return {
    async insert(token: Omit<Token, 'id'>): Promise<Token> {
      return db.insertInto('personal_access_tokens').values(token).returningAll().executeTakeFirstOrThrow();
    },
    /** The token and its user in one round trip (every authenticated request starts here). */
    async findWithUserByDigest(digest: string): Promise<{ token: Token; user: User | null } | undefined> {
      const row = await db
        .selectFrom('personal_access_tokens as t')
        .leftJoin('users as u', 'u.id', 't.user_id')
        .selectAll('t')
        .select(USER_COLUMNS.map((c) => `u.${c} as u_${c}` as const))
        .where('t.token_digest', '=', digest)
        .executeTakeFirst();
      if (!row) return undefined;
      const r = row as unknown as Record<string, unknown>;
      const user =
        r.u_id === null ? null : (Object.fromEntries(USER_COLUMNS.map((c) => [c, r[`u_${c}`]])) as unknown as User);
      const token = Object.fromEntries(TOKEN_COLUMNS.map((c) => [c, r[c]])) as unknown as Token;
      return { token, user };
    },
    async findById(id: number): Promise<Token | undefined> {
      return db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** One page of tokens (of one user, or all), oldest first. */
    listPage(filter: TokenListFilter, window: PageWindow) {
      let q = db.selectFrom('personal_access_tokens');
      if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
      if (filter.revoked !== undefined) q = q.where('revoked', '=', filter.revoked ? 1 : 0);
      if (filter.inUse) q = q.where(inUseOn(filter.inUse.today), '=', filter.inUse.is ? 1 : 0);
      if (filter.createdBefore) q = q.where('created_at', '<=', filter.createdBefore);
      if (filter.createdAfter) q = q.where('created_at', '>=', filter.createdAfter);
      if (filter.lastUsedBefore) q = q.where('last_used_at', '<=', filter.lastUsedBefore);
      if (filter.lastUsedAfter) q = q.where('last_used_at', '>=', filter.lastUsedAfter);
      if (filter.expiresBefore) q = q.where('expires_at', '<', filter.expiresBefore);
      if (filter.expiresAfter) q = q.where('expires_at', '>', filter.expiresAfter);
      if (filter.search) q = q.where(containsText(dialect, sql.ref('name'), filter.search));
      return fetchPage(db, q.selectAll().orderBy('id', 'asc'), window);
    },
    /**
     * One page of a user's tokens for their settings page: those in use first (not revoked, not expired on
     * `today`), each part newest first.
     */
    ownPage(userId: number, today: string, window: PageWindow) {
      const q = db
        .selectFrom('personal_access_tokens')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy(inUseOn(today), 'desc')
        .orderBy('id', 'desc');
      return fetchPage(db, q, window);
    },
    /** Revokes the token; false when there was none to revoke (missing, or revoked already). */
    async revoke(id: number): Promise<boolean> {
      const { numUpdatedRows } = await db
        .updateTable('personal_access_tokens')
        .set({ revoked: 1 })
        .where('id', '=', id)
        .where('revoked', '=', 0)
        .executeTakeFirst();
      return numUpdatedRows > 0n;
    },
    async touch(id: number, at: string): Promise<void> {
      await db.updateTable('personal_access_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}

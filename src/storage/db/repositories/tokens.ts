import type { Kysely } from 'kysely';
import type { Database, Token } from '../schema.ts';

export function tokensRepository(db: Kysely<Database>) {
  return {
    async insert(token: Omit<Token, 'id'>): Promise<Token> {
      return db.insertInto('personal_access_tokens').values(token).returningAll().executeTakeFirstOrThrow();
    },
    async findByDigest(digest: string): Promise<Token | undefined> {
      return db.selectFrom('personal_access_tokens').selectAll().where('token_digest', '=', digest).executeTakeFirst();
    },
    async findById(id: number): Promise<Token | undefined> {
      return db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    },
    listQuery(filter: { userId?: number }) {
      let q = db.selectFrom('personal_access_tokens');
      if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
      return q;
    },
    async revoke(id: number): Promise<void> {
      await db.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', id).execute();
    },
    async touch(id: number, at: string): Promise<void> {
      await db.updateTable('personal_access_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}

import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/** Page sessions (by the digest of their token) and the failed sign-in attempts of each user. */
export function sessionsRepository(db: Kysely<Database>) {
  return {
    async insert(row: { token_digest: string; user_id: number; created_at: string; last_seen_at: string }) {
      await db.insertInto('sessions').values(row).execute();
    },
    find(tokenDigest: string) {
      return db.selectFrom('sessions').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
    },
    async touch(tokenDigest: string, at: string) {
      await db.updateTable('sessions').set({ last_seen_at: at }).where('token_digest', '=', tokenDigest).execute();
    },
    async delete(tokenDigest: string) {
      await db.deleteFrom('sessions').where('token_digest', '=', tokenDigest).execute();
    },
    failures(userId: number) {
      return db.selectFrom('sign_in_failures').selectAll().where('user_id', '=', userId).executeTakeFirst();
    },
    async setFailures(userId: number, attempts: number, lockedUntil: string | null) {
      await db
        .insertInto('sign_in_failures')
        .values({ user_id: userId, attempts, locked_until: lockedUntil })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ attempts, locked_until: lockedUntil }))
        .execute();
    },
    async clearFailures(userId: number) {
      await db.deleteFrom('sign_in_failures').where('user_id', '=', userId).execute();
    },
  };
}

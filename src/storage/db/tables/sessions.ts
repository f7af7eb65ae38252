import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';

/** Page sessions (by the digest of their token) and the failed sign-in attempts of each user. */
export function sessionsTable(db: Kysely<Database>) {
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
    /** Removes every session last seen before `before`: whoever had one would be asked to sign in again. */
    async deleteIdleSince(before: string) {
      await db.deleteFrom('sessions').where('last_seen_at', '<', before).execute();
    },
    /** Which of these users are locked out of signing in at `now`. */
    async lockedAmong(userIds: number[], now: string): Promise<number[]> {
      if (!userIds.length) return [];
      const rows = await db
        .selectFrom('sign_in_failures')
        .select('user_id')
        .where('user_id', 'in', userIds)
        .where('locked_until', '>', now)
        .execute();
      return rows.map((r) => r.user_id);
    },
    failures(userId: number) {
      return db.selectFrom('sign_in_failures').selectAll().where('user_id', '=', userId).executeTakeFirst();
    },
    /**
     * Counts one failed attempt in one statement, so that attempts made at once are all counted (read, add
     * one and write back would count many as one): the first after an expired lock counts 1. Locks the
     * account (`lockedUntil`, attempts back to 0) once `max` are counted. Answers whether it is locked now;
     * an attempt made while a lock holds changes nothing.
     */
    async recordFailure(userId: number, now: string, max: number, lockedUntil: string): Promise<boolean> {
      const counted = await db
        .insertInto('sign_in_failures')
        .values({ user_id: userId, attempts: 1, locked_until: null })
        .onConflict((oc) =>
          oc
            .column('user_id')
            .doUpdateSet({
              attempts: sql`CASE WHEN sign_in_failures.locked_until IS NULL THEN sign_in_failures.attempts + 1 ELSE 1 END`,
              locked_until: null,
            })
            .where((eb) =>
              eb.or([eb('sign_in_failures.locked_until', 'is', null), eb('sign_in_failures.locked_until', '<=', now)]),
            ),
        )
        .returning('attempts')
        .executeTakeFirst();
      if (!counted) return true; // locked by an attempt made at the same time
      if (counted.attempts < max) return false;
      await db
        .updateTable('sign_in_failures')
        .set({ attempts: 0, locked_until: lockedUntil })
        .where('user_id', '=', userId)
        .where('attempts', '>=', max)
        .execute();
      return true;
    },
    async clearFailures(userId: number) {
      await db.deleteFrom('sign_in_failures').where('user_id', '=', userId).execute();
    },
  };
}

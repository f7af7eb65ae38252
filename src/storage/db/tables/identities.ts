import type { Kysely } from 'kysely';
import type { Database, Identity } from '../schema.ts';

/** The external identities that sign users in (OpenID Connect), by issuer and subject. */
export function identitiesTable(db: Kysely<Database>) {
  return {
    find(issuer: string, externUid: string): Promise<Identity | undefined> {
      return db
        .selectFrom('identities')
        .selectAll()
        .where('issuer', '=', issuer)
        .where('extern_uid', '=', externUid)
        .executeTakeFirst();
    },
    async insert(row: Omit<Identity, 'id'>): Promise<void> {
      await db.insertInto('identities').values(row).execute();
    },
    /** The identities of these users, oldest first. */
    forUsers(userIds: number[]): Promise<Identity[]> {
      if (!userIds.length) return Promise.resolve([]);
      return db.selectFrom('identities').selectAll().where('user_id', 'in', userIds).orderBy('id').execute();
    },
  };
}

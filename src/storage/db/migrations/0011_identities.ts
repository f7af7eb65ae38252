import type { Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// Sign-in with OpenID Connect: the identities that sign a user in, as GitLab's `identities` table. One
// provider's subject (`sub`, GitLab's extern_uid) is one user; the issuer is part of the key, so that
// pointing snippetd at another provider never signs its `sub` in as someone known to the first.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const table = db.schema.createTable('identities');
  await (dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('extern_uid', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('identities_issuer_extern_uid')
    .on('identities')
    .columns(['issuer', 'extern_uid'])
    .unique()
    .execute();
  await db.schema.createIndex('identities_user').on('identities').column('user_id').execute();
}

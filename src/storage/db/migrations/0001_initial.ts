import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../database.ts';

// One schema for both dialects: integer flags, ISO text timestamps, and an auto-increment id column
// spelled the way each database wants it.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const table = (name: string) => {
    const t = db.schema.createTable(name);
    return dialect === 'postgres'
      ? t.addColumn('id', 'serial', (c) => c.primaryKey())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  };

  await table('users')
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_email', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('external', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bot', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('password_digest', 'text')
    .addColumn('namespace_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX users_username_lower ON users (lower(username))`.execute(db);
  await sql`CREATE UNIQUE INDEX users_email_lower ON users (lower(email))`.execute(db);

  await table('personal_access_tokens')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('personal_access_tokens_user').on('personal_access_tokens').column('user_id').execute();

  await table('namespaces')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('full_path', 'text', (c) => c.notNull())
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'integer', (c) => c.references('namespaces.id'))
    .addColumn('traversal_ids', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer')
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('file_template_project_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX namespaces_full_path_lower ON namespaces (lower(full_path))`.execute(db);
  await db.schema.createIndex('namespaces_traversal').on('namespaces').column('traversal_ids').execute();

  await table('projects')
    .addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('full_path', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('default_branch', 'text')
    .addColumn('snippets_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('creator_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_activity_at', 'text', (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX projects_full_path_lower ON projects (lower(full_path))`.execute(db);
  await db.schema.createIndex('projects_namespace').on('projects').column('namespace_id').execute();

  await table('members')
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('members_source_user', ['source_type', 'source_id', 'user_id'])
    .execute();
  await db.schema.createIndex('members_user').on('members').columns(['user_id', 'source_type']).execute();

  await db.schema
    .createTable('application_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  // Snippets and their mirrored files: get, list and raw of the current version read these rows and
  // never touch git. The repository (one per snippet) is the source of truth for history.
  await table('snippets')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('head_commit', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snippets_project_id').on('snippets').columns(['project_id', 'id']).execute();

  await db.schema
    .createTable('snippet_files')
    .addColumn('snippet_id', 'integer', (c) => c.notNull().references('snippets.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('blob_id', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('snippet_files_pk', ['snippet_id', 'path'])
    .execute();

  await db.schema
    .createTable('user_agent_details')
    .addColumn('snippet_id', 'integer', (c) => c.primaryKey().references('snippets.id').onDelete('cascade'))
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('submitted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

// The setup the bulk-loading scripts share (search.ts, snippet-lists.ts, million.ts): rows inserted directly
// into the storage's tables, in the caller's transaction, as the server's own writes would leave them.
import type { Kysely, Transaction } from 'kysely';
import { digestToken } from '../src/domain/tokens.ts';
import type { Database, Visibility } from '../src/storage/db/schema.ts';

/** The three levels in turn: project i (and snippet n, where a script wants it) has levels[i % 3]. */
export const LEVELS: Visibility[] = ['public', 'internal', 'private'];

/**
 * `users` users named user0, user1, …; a group `g` with `projects` projects p0, p1, … of the three levels in
 * turn; user0 a developer of the first `memberOf` projects. Returns user0's id (the others follow it) and the
 * projects' ids.
 */
export async function insertUsersAndProjects(
  tx: Transaction<Database>,
  opts: { users: number; projects: number; memberOf: number; now: string },
): Promise<{ firstUser: number; projectIds: number[] }> {
  const { now } = opts;
  const users = Array.from({ length: opts.users }, (_, i) => ({
    username: `user${i}`,
    email: `user${i}@example.com`,
    name: `User ${i}`,
    public_email: null,
    state: 'active' as const,
    admin: 0 as const,
    external: 0 as const,
    bot: 0 as const,
    password_digest: null,
    namespace_id: null,
    created_at: now,
  }));
  for (let i = 0; i < users.length; i += 250)
    await tx
      .insertInto('users')
      .values(users.slice(i, i + 250))
      .execute();
  const group = await tx
    .insertInto('namespaces')
    .values({
      kind: 'group',
      name: 'g',
      path: 'g',
      full_path: 'g',
      full_name: 'g',
      parent_id: null,
      traversal_ids: '0',
      owner_id: null,
      visibility: 'public',
      description: '',
      file_template_project_id: null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await tx
    .updateTable('namespaces')
    .set({ traversal_ids: String(group.id) })
    .where('id', '=', group.id)
    .execute();
  const projects = Array.from({ length: opts.projects }, (_, i) => ({
    namespace_id: group.id,
    name: `p${i}`,
    path: `p${i}`,
    full_path: `g/p${i}`,
    description: null,
    visibility: LEVELS[i % 3],
    default_branch: 'main',
    snippets_access_level: 'enabled' as const,
    archived: 0 as const,
    creator_id: 1,
    created_at: now,
    last_activity_at: now,
  }));
  const projectIds = (await tx.insertInto('projects').values(projects).returning('id').execute()).map((p) => p.id);
  const firstUser = (
    await tx.selectFrom('users').select('id').where('username', '=', 'user0').executeTakeFirstOrThrow()
  ).id;
  if (opts.memberOf > 0)
    await tx
      .insertInto('members')
      .values(
        projectIds.slice(0, opts.memberOf).map((id) => ({
          source_type: 'Project' as const,
          source_id: id,
          user_id: firstUser,
          access_level: 30,
          created_at: now,
        })),
      )
      .execute();
  return { firstUser, projectIds };
}

/** A personal access token `plain` for the user, with the scopes of the first token (root's, from bootstrap). */
export async function insertUserToken(db: Kysely<Database>, userId: number, plain: string): Promise<void> {
  const token = await db.selectFrom('personal_access_tokens').selectAll().orderBy('id').executeTakeFirstOrThrow();
  await db
    .insertInto('personal_access_tokens')
    .values({ ...token, id: undefined, user_id: userId, name: 'bench', token_digest: digestToken(plain) })
    .execute();
}

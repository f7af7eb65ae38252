import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database, Member } from '../schema.ts';
import type { DialectName } from '../database.ts';
import { fetchPage, type PageWindow } from '../page.ts';
import { userMatches } from './users.ts';

/** Whose memberships a list holds, and GitLab's filters of it (lib/api/members.rb: query, user_ids). */
export interface MemberSources {
  projectId?: number;
  namespaceIds?: number[];
  /** In the user's name or username (any case), or their whole public email. */
  query?: string;
  userIds?: number[];
}

export type SourceType = Member['source_type'];

export interface MemberWithUser extends Member {
  username: string;
  name: string;
  state: string;
  user_created_at: string;
}

/**
 * In SQL, whether user `userId` has at least `level` in the project the table alias `project` names: directly,
 * or through a group above it (the lists' form of domain/projects.ts#projectAccess).
 */
export const projectAccessAtLeast = (userId: number, level: number, project: string) =>
  sql<boolean>`(
    EXISTS (SELECT 1 FROM members m WHERE m.user_id = ${userId} AND m.source_type = 'Project'
            AND m.source_id = ${sql.ref(`${project}.id`)} AND m.access_level >= ${level})
    OR EXISTS (SELECT 1 FROM members m JOIN namespaces g ON m.source_type = 'Namespace' AND m.source_id = g.id
               JOIN namespaces pn ON pn.id = ${sql.ref(`${project}.namespace_id`)}
               WHERE m.user_id = ${userId} AND m.access_level >= ${level}
                 AND (pn.traversal_ids = g.traversal_ids OR pn.traversal_ids LIKE g.traversal_ids || '/%')))`;

/** Members of one project or of a set of namespaces: the rows of table alias `table` that are theirs. */
function ofSources(table: string, sources: { projectId?: number; namespaceIds?: number[] }) {
  const column = (name: string) => sql.ref(`${table}.${name}`);
  const ors = [];
  if (sources.projectId !== undefined)
    ors.push(sql`(${column('source_type')} = 'Project' AND ${column('source_id')} = ${sources.projectId})`);
  if (sources.namespaceIds?.length)
    ors.push(
      sql`(${column('source_type')} = 'Namespace' AND ${column('source_id')} IN (${sql.join(sources.namespaceIds)}))`,
    );
  return ors.length ? sql<boolean>`(${sql.join(ors, sql` OR `)})` : sql<boolean>`(1 = 0)`;
}

/** `reads`: where the lists of inherited members go (off SQLite's event loop: Db.reader). */
export function membersTable(db: Kysely<Database>, dialect: DialectName, reads: Kysely<Database>) {
  const withUser = () =>
    db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .selectAll('members')
      .select(['users.username', 'users.name', 'users.state', 'users.created_at as user_created_at']);
  /** The memberships of the sources, filtered as asked. */
  const ofList = (sources: MemberSources) => {
    let q = withUser().where(ofSources('members', sources));
    const { query, userIds } = sources;
    if (query) q = q.where(userMatches(dialect, query, 'users', 'public_email'));
    if (userIds) q = q.where('members.user_id', 'in', userIds.length ? userIds : [-1]);
    return q;
  };
  /**
   * The user's access levels to each of many projects in one query (a page of a list): each project's id (null: only
   * the groups) and the ids of the groups above it (none for a personal project).
   */
  async function accessLevelsOfMany(
    userId: number,
    projects: { id: number | null; namespaceIds: number[] }[],
  ): Promise<Map<number | null, { project: number; group: number }>> {
    const levels = new Map(projects.map((p) => [p.id, { project: 0, group: 0 }]));
    const projectIds = projects.flatMap((p) => (p.id === null ? [] : [p.id]));
    const groupIds = [...new Set(projects.flatMap((p) => p.namespaceIds))];
    if (!projectIds.length && !groupIds.length) return levels;
    const rows = await db
      .selectFrom('members')
      .select(['source_type', 'source_id', 'access_level'])
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.or([
          ...(projectIds.length
            ? [eb.and([eb('source_type', '=', 'Project'), eb('source_id', 'in', projectIds)])]
            : []),
          ...(groupIds.length ? [eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', groupIds)])] : []),
        ]),
      )
      .execute();
    const groupLevel = new Map<number, number>();
    for (const r of rows) {
      if (r.source_type === 'Project') {
        const own = levels.get(r.source_id)!;
        own.project = Math.max(own.project, r.access_level);
      } else groupLevel.set(r.source_id, Math.max(groupLevel.get(r.source_id) ?? 0, r.access_level));
    }
    for (const p of projects) {
      const own = levels.get(p.id)!;
      for (const id of p.namespaceIds) own.group = Math.max(own.group, groupLevel.get(id) ?? 0);
    }
    return levels;
  }

  return {
    async insert(member: Omit<Member, 'id'>): Promise<Member> {
      return db.insertInto('members').values(member).returningAll().executeTakeFirstOrThrow();
    },
    async find(sourceType: SourceType, sourceId: number, userId: number): Promise<MemberWithUser | undefined> {
      return withUser()
        .where('source_type', '=', sourceType)
        .where('source_id', '=', sourceId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },
    async update(id: number, accessLevel: number): Promise<void> {
      await db.updateTable('members').set({ access_level: accessLevel }).where('id', '=', id).execute();
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('members').where('id', '=', id).execute();
    },
    /** How many Owner memberships of these groups active users hold (GitLab's Member.owners: one a row). */
    async countOwners(namespaceIds: number[], ownerLevel: number): Promise<number> {
      const row = await db
        .selectFrom('members')
        .innerJoin('users', 'users.id', 'members.user_id')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('members.source_type', '=', 'Namespace')
        .where('members.source_id', 'in', namespaceIds)
        .where('members.access_level', '>=', ownerLevel)
        .where('users.state', '=', 'active')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    /** The groups where the user is a member at `level` or above themselves (not through a parent group). */
    async groupIdsAtLevel(userId: number, level: number): Promise<number[]> {
      const rows = await db
        .selectFrom('members')
        .select('source_id')
        .where('user_id', '=', userId)
        .where('source_type', '=', 'Namespace')
        .where('access_level', '>=', level)
        .orderBy('source_id')
        .execute();
      return rows.map((r) => r.source_id);
    },
    /** How many memberships of these groups at `level` or above users other than `userId` hold, whatever their state. */
    async countOthersAtLevel(namespaceIds: number[], userId: number, level: number): Promise<number> {
      const row = await db
        .selectFrom('members')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', namespaceIds)
        .where('access_level', '>=', level)
        .where('user_id', '!=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    /** Removes every membership of the user, of groups and of projects. */
    async deleteOfUser(userId: number): Promise<void> {
      await db.deleteFrom('members').where('user_id', '=', userId).execute();
    },
    /**
     * One page of the direct and inherited members of a project or group: each user once, with their highest
     * level (of equals, the membership made first), by user id. Read off the event loop: gathered and sorted
     * here, an owner adding every user of the instance at each level of a group's ancestry made one request
     * sort them all.
     */
    allPage(sources: MemberSources, window: PageWindow) {
      const ranked = ofList(sources).select(
        sql<number>`row_number() OVER (PARTITION BY members.user_id ORDER BY members.access_level DESC, members.id)`.as(
          'rank',
        ),
      );
      // The rank column comes along; the presenter reads the member's and the user's.
      const query = reads
        .selectFrom(ranked.as('ranked'))
        .selectAll()
        .where('rank', '=', 1)
        .orderBy('user_id', 'asc') as unknown as SelectQueryBuilder<Database, keyof Database, MemberWithUser>;
      return fetchPage(reads, query, window);
    },
    /** One page of the direct members of a project or group, by user id. */
    listPage(sources: MemberSources, window: PageWindow) {
      return fetchPage(db, ofList(sources).orderBy('members.user_id', 'asc'), window);
    },
    /** Members of one project or of a set of namespaces, with their user columns. */
    listQuery(sources: { projectId?: number; namespaceIds?: number[] }) {
      return withUser().where(ofSources('members', sources));
    },
    /** Highest access level the user holds on the project directly and through the given groups. */
    /** The user's level in each of these groups where they are a member themselves (no entry where not). */
    async groupLevels(userId: number, namespaceIds: number[]): Promise<Map<number, number>> {
      const levels = new Map<number, number>();
      if (!namespaceIds.length) return levels;
      const rows = await db
        .selectFrom('members')
        .select(['source_id', 'access_level'])
        .where('user_id', '=', userId)
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', namespaceIds)
        .execute();
      for (const r of rows) levels.set(r.source_id, Math.max(levels.get(r.source_id) ?? 0, r.access_level));
      return levels;
    },
    /** The user's own access level to a project (`projectId`, or none) and their best in the groups above it. */
    async accessLevels(
      userId: number,
      projectId: number | null,
      namespaceIds: number[],
    ): Promise<{ project: number; group: number }> {
      return (await accessLevelsOfMany(userId, [{ id: projectId, namespaceIds }])).get(projectId)!;
    },
    accessLevelsOfMany,
    /** True when the user is a member of any group or project inside the namespace subtree. */
    async hasMembershipBelow(userId: number, traversalIds: string): Promise<boolean> {
      const row = await db
        .selectFrom('members')
        .select('members.id')
        .where('members.user_id', '=', userId)
        .where((eb) =>
          eb.or([
            eb.and([
              eb('members.source_type', '=', 'Namespace'),
              eb(
                'members.source_id',
                'in',
                eb.selectFrom('namespaces').select('id').where('traversal_ids', 'like', `${traversalIds}/%`),
              ),
            ]),
            eb.and([
              eb('members.source_type', '=', 'Project'),
              eb(
                'members.source_id',
                'in',
                eb
                  .selectFrom('projects')
                  .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
                  .select('projects.id')
                  .where((w) =>
                    w.or([
                      w('namespaces.traversal_ids', '=', traversalIds),
                      w('namespaces.traversal_ids', 'like', `${traversalIds}/%`),
                    ]),
                  ),
              ),
            ]),
          ]),
        )
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

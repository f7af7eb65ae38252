import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database, Namespace, NamespacesTable, Visibility } from '../schema.ts';
import type { DialectName } from '../database.ts';
import type { Insertable, Updateable } from 'kysely';
import { sql } from 'kysely';
import { setsNothing } from '../rows.ts';
import { containsText, fetchPage, type PageWindow } from '../page.ts';

export type NewNamespace = Omit<Insertable<NamespacesTable>, 'traversal_ids'>;

/** GET /groups's filters (domain/groups.ts#listGroups says which groups each viewer gets). */
export interface GroupListFilter {
  /** Every group (an administrator's default); otherwise those below. */
  all: boolean;
  /** Groups with these visibility levels. */
  visibleLevels: Visibility[];
  /** And the groups tied to this user's memberships, as `related` says (tiedToMembership). */
  member?: { userId: number; minAccess: number; related: 'descendants' | 'both' | 'none' };
  search?: string;
  skip?: number[];
  topLevelOnly?: boolean;
  /** Only the groups directly inside this group, or (`descendants`) anywhere below it. */
  parent?: { id: number; traversalIds: string; descendants: boolean };
  visibility?: Visibility;
}

export type GroupOrderColumn = 'name' | 'path' | 'id';

/** GET /namespaces's filters (domain/namespaces.ts says which namespaces each viewer gets). */
export interface NamespaceListFilter {
  /** Every namespace (an administrator's); otherwise this user's own and the groups they are a member of at `minAccess`. */
  member: { userId: number; minAccess: number } | null;
  topLevelOnly: boolean;
  search?: string;
  /** The search matches the full path, not the namespace's own path. */
  fullPathSearch: boolean;
}

/**
 * In SQL, whether the outer query's `namespaces` row is among the groups tied to `member`'s memberships, as GitLab's
 * GroupsFinder ties them: the groups of their group memberships (at `minAccess` or above); with `descendants` or
 * `both` the groups below those; with `both` also the groups of the projects they are a member of, and every group
 * above any of these (User#authorized_groups.self_and_ancestors). Walked by parent (recursive queries on its
 * index), so the cost follows the groups reached, not every group against every membership.
 */
const tiedToMembership = (member: NonNullable<GroupListFilter['member']>) => {
  const memberGroups = sql`SELECT source_id AS id FROM members
    WHERE source_type = 'Namespace' AND user_id = ${member.userId} AND access_level >= ${member.minAccess}`;
  if (member.related === 'none') return sql<boolean>`namespaces.id IN (${memberGroups})`;
  const below = sql`below(id) AS (${memberGroups}
    UNION SELECT n.id FROM namespaces n JOIN below b ON n.parent_id = b.id)`;
  if (member.related === 'descendants')
    return sql<boolean>`namespaces.id IN (WITH RECURSIVE ${below} SELECT id FROM below)`;
  const projectGroups = sql`SELECT p.namespace_id FROM members m JOIN projects p ON p.id = m.source_id
    WHERE m.source_type = 'Project' AND m.user_id = ${member.userId}`;
  return sql<boolean>`namespaces.id IN (WITH RECURSIVE ${below},
    above(id, parent_id) AS (SELECT id, parent_id FROM namespaces WHERE id IN (${memberGroups}) OR id IN (${projectGroups})
      UNION SELECT n.id, n.parent_id FROM namespaces n JOIN above a ON n.id = a.parent_id)
    SELECT id FROM below UNION SELECT id FROM above)`;
};

/** In SQL, whether a namespace's `name` or `path` column (own or full) holds `search`, in any case. */
const nameOrPathHolds = (
  dialect: DialectName,
  search: string,
  name: 'name' | 'full_name',
  path: 'path' | 'full_path',
) => sql<boolean>`(${containsText(dialect, sql.ref(name), search)} OR ${containsText(dialect, sql.ref(path), search)})`;

/** `reads`: where lists go (off SQLite's event loop: Db.reader). */
export function namespacesTable(db: Kysely<Database>, dialect: DialectName, reads: Kysely<Database>) {
  return {
    /** Inserts a namespace and fills its traversal ids (parent's ids + its own) in one transaction. */
    async insert(ns: NewNamespace, parent: Namespace | null, tx: Kysely<Database> = db): Promise<Namespace> {
      const row = await tx
        .insertInto('namespaces')
        .values({ ...ns, traversal_ids: '' })
        .returningAll()
        .executeTakeFirstOrThrow();
      const traversal = parent ? `${parent.traversal_ids}/${row.id}` : String(row.id);
      return tx
        .updateTable('namespaces')
        .set({ traversal_ids: traversal })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    async findById(id: number): Promise<Namespace | undefined> {
      return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /**
     * In a transaction: the namespace as committed now, locked until the transaction ends against a change of
     * its visibility ('share': something is added or made more visible inside it) or against anything inside
     * it changing ('update': its own visibility changes). Ancestors are locked before descendants. SQLite
     * needs no lock: its transactions run one at a time.
     */
    async lock(id: number, strength: 'update' | 'share'): Promise<Namespace | undefined> {
      const q = db.selectFrom('namespaces').selectAll().where('id', '=', id);
      const locked = dialect === 'sqlite' ? q : strength === 'update' ? q.forUpdate() : q.forShare();
      return locked.executeTakeFirst();
    },
    async findByFullPath(fullPath: string): Promise<Namespace | undefined> {
      return db
        .selectFrom('namespaces')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['full_path']), '=', fullPath.toLowerCase()))
        .executeTakeFirst();
    },
    /** The paths, lower-cased, of the users and top-level groups whose path starts with `prefix`. */
    async topLevelPathsStartingWith(prefix: string): Promise<Set<string>> {
      const rows = await db
        .selectFrom('namespaces')
        .select('full_path')
        .where('parent_id', 'is', null)
        .where(containsText(dialect, sql.ref('full_path'), prefix, 'prefix'))
        .execute();
      return new Set(rows.map((r) => r.full_path.toLowerCase()));
    },
    /** Up to `limit` groups directly inside `parentId`, by name (then id), after `after` in that order. */
    async childGroups(
      parentId: number,
      after: Pick<Namespace, 'name' | 'id'> | null,
      limit: number,
    ): Promise<Namespace[]> {
      let query = db.selectFrom('namespaces').selectAll().where('parent_id', '=', parentId).where('kind', '=', 'group');
      // As a row value, which both databases read through the index of (parent_id, name, id).
      if (after) query = query.where((eb) => eb(eb.refTuple('name', 'id'), '>', eb.tuple(after.name, after.id)));
      return query.orderBy('name').orderBy('id').limit(limit).execute();
    },
    /** One page of the groups `filter` gives, in `order` then by id. */
    groupsPage(
      filter: GroupListFilter,
      order: { column: GroupOrderColumn; direction: 'asc' | 'desc' },
      window: PageWindow,
    ) {
      let q = db.selectFrom('namespaces').selectAll().where('kind', '=', 'group');
      if (!filter.all) {
        const { member, visibleLevels } = filter;
        q = q.where((eb) =>
          eb.or([
            ...(visibleLevels.length ? [eb('visibility', 'in', visibleLevels)] : []),
            ...(member ? [tiedToMembership(member)] : []),
            ...(visibleLevels.length || member ? [] : [sql<boolean>`1 = 0`]),
          ]),
        );
      }
      // GitLab's Namespace.search: in the full path when listing from the top, in the own path inside a parent.
      if (filter.search)
        q = q.where(nameOrPathHolds(dialect, filter.search, 'name', filter.parent ? 'path' : 'full_path'));
      if (filter.skip?.length) q = q.where('id', 'not in', filter.skip);
      if (filter.topLevelOnly) q = q.where('parent_id', 'is', null);
      const parent = filter.parent;
      if (parent)
        q = parent.descendants
          ? q.where('traversal_ids', 'like', `${parent.traversalIds}/%`)
          : q.where('parent_id', '=', parent.id);
      if (filter.visibility) q = q.where('visibility', '=', filter.visibility);
      const query = q.orderBy(order.column, order.direction).orderBy('id', 'asc');
      return fetchPage(reads, query, window);
    },
    /**
     * One page of namespaces by id: every one, or a user's own and the groups they are a member of themselves (GitLab's
     * User#namespaces: no group above or below them), with `ownedOnly` those they own.
     */
    namespacesPage(filter: NamespaceListFilter, window: PageWindow) {
      let q = db.selectFrom('namespaces').selectAll();
      const member = filter.member;
      if (member)
        q = q.where((eb) =>
          eb.or([
            eb.and([eb('kind', '=', 'user'), eb('owner_id', '=', member.userId)]),
            eb(
              'id',
              'in',
              eb
                .selectFrom('members')
                .select('source_id')
                .where('source_type', '=', 'Namespace')
                .where('user_id', '=', member.userId)
                .where('access_level', '>=', member.minAccess),
            ),
          ]),
        );
      if (filter.topLevelOnly) q = q.where('parent_id', 'is', null);
      // GitLab's Namespace.search: the route's path and name, which with include_parents are the full ones.
      if (filter.search)
        q = q.where(
          filter.fullPathSearch
            ? nameOrPathHolds(dialect, filter.search, 'full_name', 'full_path')
            : nameOrPathHolds(dialect, filter.search, 'name', 'path'),
        );
      return fetchPage(reads, q.orderBy('id', 'asc'), window);
    },
    /**
     * How many active users are members of each group or of a group below it (GitLab's members_count_with_descendants,
     * of its active members), by group id; the groups below walked by parent, all of them in one statement.
     */
    async membersWithDescendants(groupIds: number[]): Promise<Map<number, number>> {
      if (!groupIds.length) return new Map();
      const { rows } = await sql<{ id: number; count: number | string }>`
        WITH RECURSIVE tree(root, id) AS (
          SELECT id, id FROM namespaces WHERE id IN (${sql.join(groupIds)})
          UNION ALL SELECT t.root, n.id FROM namespaces n JOIN tree t ON n.parent_id = t.id)
        SELECT t.root AS id, COUNT(DISTINCT m.user_id) AS count FROM tree t
          JOIN members m ON m.source_type = 'Namespace' AND m.source_id = t.id
          JOIN users u ON u.id = m.user_id AND u.state = 'active'
        GROUP BY t.root`.execute(reads);
      return new Map(rows.map((r) => [Number(r.id), Number(r.count)]));
    },
    /** The group and every group below it, each after its parent. */
    async subtree(group: Pick<Namespace, 'traversal_ids'>): Promise<Namespace[]> {
      return db
        .selectFrom('namespaces')
        .selectAll()
        .where(inSubtree(group))
        .orderBy(sql`length(traversal_ids)`)
        .orderBy('id')
        .execute();
    },
    /** Removes the group and every group below it, with their members; call inside a transaction. */
    async deleteSubtree(group: Pick<Namespace, 'traversal_ids'>): Promise<void> {
      const ids = db.selectFrom('namespaces').select('id').where(inSubtree(group));
      await db.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', ids).execute();
      await db.deleteFrom('namespaces').where(inSubtree(group)).execute();
    },
    async findManyByIds(ids: number[]): Promise<Namespace[]> {
      if (ids.length === 0) return [];
      return db.selectFrom('namespaces').selectAll().where('id', 'in', ids).execute();
    },
    async update(id: number, changes: Updateable<NamespacesTable>): Promise<Namespace> {
      if (setsNothing(changes))
        return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return db.updateTable('namespaces').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    },
  };
}

/** In SQL, whether a namespace is `group` or below it. */
export const inSubtree = (group: Pick<Namespace, 'traversal_ids'>) => (eb: ExpressionBuilder<Database, 'namespaces'>) =>
  eb.or([eb('traversal_ids', '=', group.traversal_ids), eb('traversal_ids', 'like', `${group.traversal_ids}/%`)]);

export function ancestorIds(ns: Pick<Namespace, 'traversal_ids'>): number[] {
  return ns.traversal_ids.split('/').map(Number);
}

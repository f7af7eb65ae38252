import { sql, type Kysely, type Insertable, type Updateable, type SelectQueryBuilder } from 'kysely';
import type { Database, Namespace, Project, ProjectsTable, Visibility } from '../schema.ts';
import type { DialectName } from '../database.ts';
import { containsText, fetchPage, type PageWindow } from '../page.ts';
import { setsNothing } from '../rows.ts';
import { projectAccessAtLeast } from './members.ts';
import { inSubtree } from './namespaces.ts';

export type ProjectOrderColumn = 'id' | 'name' | 'path' | 'created_at' | 'last_activity_at';

export interface ProjectListFilter {
  /** null = anonymous. */
  viewer: { id: number; admin: boolean; external: boolean } | null;
  membership?: boolean;
  /** Only projects where the viewer's effective access is at least this level. */
  minAccessLevel?: number;
  search?: string;
  /** The search matches the namespaces' full path too (GitLab's search_namespaces). */
  searchNamespaces?: boolean;
  /** Only the projects directly in this namespace. */
  namespaceId?: number;
  /** Only the projects in the namespace with these traversal ids, or in any namespace below it. */
  underNamespace?: string;
  archived?: boolean;
  visibility?: Visibility;
  idAfter?: number;
  idBefore?: number;
  lastActivityAfter?: string;
  lastActivityBefore?: string;
}

const NAMESPACE_COLUMNS = [
  'id',
  'kind',
  'name',
  'path',
  'full_path',
  'full_name',
  'parent_id',
  'traversal_ids',
  'owner_id',
  'visibility',
  'description',
  'file_template_project_id',
  'created_at',
] as const satisfies readonly (keyof Namespace)[];

/** `reads`: where list pages go (off SQLite's event loop: Db.reader). */
export function projectsTable(db: Kysely<Database>, dialect: DialectName, reads: Kysely<Database>) {
  /** A project and its namespace in one round trip (every project-scoped request starts here). */
  async function withNamespace(
    by: { id: number } | { fullPath: string },
  ): Promise<{ project: Project; namespace: Namespace } | undefined> {
    let q = db
      .selectFrom('projects')
      .innerJoin('namespaces as n', 'n.id', 'projects.namespace_id')
      .selectAll('projects')
      .select(NAMESPACE_COLUMNS.map((c) => `n.${c} as n_${c}` as const));
    q =
      'id' in by
        ? q.where('projects.id', '=', by.id)
        : q.where((eb) => eb(eb.fn('lower', ['projects.full_path']), '=', by.fullPath.toLowerCase()));
    const row = (await q.executeTakeFirst()) as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const namespace = Object.fromEntries(NAMESPACE_COLUMNS.map((c) => [c, row[`n_${c}`]])) as unknown as Namespace;
    const project = Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('n_'))) as unknown as Project;
    return { project, namespace };
  }
  return {
    withNamespace,
    async insert(project: Insertable<ProjectsTable>): Promise<Project> {
      return db.insertInto('projects').values(project).returningAll().executeTakeFirstOrThrow();
    },
    /**
     * Locks the row for the rest of the transaction (PostgreSQL; SQLite transactions are serialised anyway);
     * false when the project is gone. Its delete takes it for `update`, which waits for every writer in the
     * project: a write to its repository takes a key-share lock (`share`) first, as a snippet being created
     * holds one through its foreign key. Those wait neither for each other nor for an update of the row
     * (a push choosing the default branch): a plain share lock would deadlock two such writers.
     */
    async lock(id: number, strength: 'update' | 'share'): Promise<boolean> {
      const q = db.selectFrom('projects').select('id').where('id', '=', id);
      const locked = dialect === 'sqlite' ? q : strength === 'update' ? q.forUpdate() : q.forKeyShare();
      return (await locked.executeTakeFirst()) !== undefined;
    },
    async findById(id: number): Promise<Project | undefined> {
      return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async findByFullPath(fullPath: string): Promise<Project | undefined> {
      return db
        .selectFrom('projects')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['full_path']), '=', fullPath.toLowerCase()))
        .executeTakeFirst();
    },
    async findByNameInNamespace(namespaceId: number, name: string): Promise<Project | undefined> {
      return db
        .selectFrom('projects')
        .selectAll()
        .where('namespace_id', '=', namespaceId)
        .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
        .executeTakeFirst();
    },
    async update(id: number, changes: Updateable<ProjectsTable>): Promise<Project> {
      if (setsNothing(changes))
        return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return db.updateTable('projects').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    },
    /** The projects in the group or in any group below it, by id. */
    async idsBelow(group: Pick<Namespace, 'traversal_ids'>): Promise<number[]> {
      const rows = await db
        .selectFrom('projects')
        .select('id')
        .where('namespace_id', 'in', db.selectFrom('namespaces').select('id').where(inSubtree(group)))
        .orderBy('id')
        .execute();
      return rows.map((r) => r.id);
    },
    /** Removes the project with its members and snippets; call inside a transaction. */
    async delete(id: number): Promise<void> {
      const snippetIds = db.selectFrom('snippets').select('id').where('project_id', '=', id);
      await db.deleteFrom('snippet_files').where('snippet_id', 'in', snippetIds).execute();
      await db.deleteFrom('snippet_file_text').where('snippet_id', 'in', snippetIds).execute();
      await db.deleteFrom('user_agent_details').where('snippet_id', 'in', snippetIds).execute();
      await db.deleteFrom('snippets').where('project_id', '=', id).execute();
      await db.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', id).execute();
      await db
        .updateTable('namespaces')
        .set({ file_template_project_id: null })
        .where('file_template_project_id', '=', id)
        .execute();
      await db.deleteFrom('projects').where('id', '=', id).execute();
    },
    /**
     * One page of the projects a viewer may see, in the given order (ties by id), read off the event loop: no
     * index serves both the visibility rule and the order, so a page sorts every visible project (80,000: 70-150
     * ms, whichever the page).
     */
    visiblePage(
      filter: ProjectListFilter,
      order: { column: ProjectOrderColumn; direction: 'asc' | 'desc' },
      window: PageWindow,
    ) {
      const query = this.visibleQuery(filter)
        .selectAll()
        .orderBy(order.column, order.direction)
        .orderBy('id', order.direction);
      return fetchPage(reads, query, window);
    },
    /** The projects a viewer may see (the visibility rule of policy.ts, expressed in SQL for lists). */
    visibleQuery(filter: ProjectListFilter): SelectQueryBuilder<Database, 'projects', object> {
      const viewer = filter.viewer;
      let q = db.selectFrom('projects');
      const accessAtLeast = (level: number) => projectAccessAtLeast(viewer?.id ?? -1, level, 'projects');
      if (filter.membership || filter.minAccessLevel) {
        q = q.where(accessAtLeast(filter.minAccessLevel ?? 10));
      } else if (!viewer) {
        q = q.where('visibility', '=', 'public');
      } else if (!viewer.admin) {
        const levels: Visibility[] = viewer.external ? ['public'] : ['public', 'internal'];
        q = q.where((eb) => eb.or([eb('visibility', 'in', levels), accessAtLeast(10)]));
      }
      if (filter.namespaceId !== undefined) q = q.where('namespace_id', '=', filter.namespaceId);
      if (filter.underNamespace !== undefined) {
        const traversal = filter.underNamespace;
        q = q.where('namespace_id', 'in', (eb) =>
          eb
            .selectFrom('namespaces')
            .select('id')
            .where((n) => n.or([n('traversal_ids', '=', traversal), n('traversal_ids', 'like', `${traversal}/%`)])),
        );
      }
      if (filter.search) {
        const search = filter.search;
        q = q.where((eb) =>
          eb.or([
            containsText(dialect, sql.ref('projects.name'), search),
            containsText(dialect, sql.ref('projects.path'), search),
            containsText(dialect, sql.ref('projects.description'), search),
            ...(filter.searchNamespaces ? [containsText(dialect, sql.ref('projects.full_path'), search)] : []),
          ]),
        );
      }
      if (filter.archived !== undefined) q = q.where('archived', '=', filter.archived ? 1 : 0);
      if (filter.visibility) q = q.where('visibility', '=', filter.visibility);
      if (filter.idAfter !== undefined) q = q.where('id', '>', filter.idAfter);
      if (filter.idBefore !== undefined) q = q.where('id', '<', filter.idBefore);
      if (filter.lastActivityAfter) q = q.where('last_activity_at', '>', filter.lastActivityAfter);
      if (filter.lastActivityBefore) q = q.where('last_activity_at', '<', filter.lastActivityBefore);
      return q;
    },
  };
}

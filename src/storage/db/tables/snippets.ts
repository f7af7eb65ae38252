import {
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type SelectQueryBuilder,
  sql,
  type Updateable,
} from 'kysely';
import type { Database, Snippet, SnippetsTable, Visibility } from '../schema.ts';
import { byteOrder } from '../../../order.ts';
import {
  containsText,
  fetchSnippetPage,
  lowerFunction,
  type PageWindow,
  pathsInGitOrder,
  SNIPPET_PATHS,
} from '../page.ts';
import { MAX_COUNTED } from '../../../paging.ts';
import { setsNothing } from '../rows.ts';
import { projectAccessAtLeast } from './members.ts';
import { snippetTextTable, WALKED_FIRST } from './snippet-text.ts';
import type { DialectName } from '../database.ts';
import { compiledOnce } from '../compiled-once.ts';

/** A file of a snippet's head: its path, its blob and the blob's size (the bytes are in git_objects). */
export interface IndexedFile {
  path: string;
  blob_id: string;
  size: number;
}

/** Git's order of paths (byte order), which GitLab uses for `files`, `file_name` and raw. */
export const byPath = (a: { path: string }, b: { path: string }) => byteOrder(a.path, b.path);

/**
 * Who is looking, as the visibility rule needs it (domain/snippets/finder.ts derives it from the policy):
 * everything (an administrator), or a user (null: anonymous) who sees these levels where not a member.
 */
export type SnippetScope = { everything: true } | { everything: false; userId: number | null; levels: Visibility[] };

/** What a list narrows the visible snippets to. */
export interface SnippetListFilter {
  authorId?: number;
  projectId?: number;
  /** Personal snippets (no project) only. */
  kind?: 'personal';
  /** ISO 8601 bounds on created_at, both included (GitLab's CreatedAtFilter). */
  createdAfter?: string;
  createdBefore?: string;
  titleContains?: string;
  /** GitLab's Snippet.search: the title, description or (first) file name matches (see TextMatch). */
  matching?: TextMatch;
  /** Its title, description, or one of its files' paths or content holds this text (3+ characters), any case. */
  holding?: string;
  /** The text of `holding` or `matching` is in many snippets: walk them rather than list them by index. */
  commonText?: boolean;
  /** The ids of the snippets holding `holding` (3+ characters, not `commonText`), found by visibleRecentlyUpdatedPage. */
  holdingIds?: number[];
  /** Only snippets of this visibility. */
  visibility?: Visibility;
  /** Only snippets with a file whose path holds this text (any case). */
  filePathContains?: string;
  /** Only snippets with a file whose name ends with one of these extensions (without the dot, any case). */
  fileExtensions?: string[];
  /** Only snippets of projects in the group with these traversal ids or in groups below it. */
  groupTraversalIds?: string;
  /** Keyset paging: only snippets with smaller ids. */
  beforeId?: number;
}

/**
 * A column matches when it contains every term (case-insensitively), or, for `equals`, when it is that text
 * whatever its case (GitLab's fuzzy_search: ILIKE with and without wildcards).
 */
export type TextMatch = { allOf: string[] } | { equals: string };

const SEARCHED_COLUMNS = ['title', 'description', 'file_name'] as const;

function matchesText(dialect: DialectName, column: (typeof SEARCHED_COLUMNS)[number], match: TextMatch) {
  const ref = sql.ref<string | null>(`snippets.${column}`);
  if ('equals' in match)
    return sql<boolean>`${lowerFunction(dialect, match.equals)}(coalesce(${ref}, '')) = ${match.equals.toLowerCase()}`;
  return sql<boolean>`(${sql.join(
    match.allOf.map((term) => containsText(dialect, ref, term)),
    sql` AND `,
  )})`;
}

/** From this offset a list page goes to the reads off the event loop: its walk costs more than the trip there. */
const DEEP_OFFSET = 1000;

/** Guest (10) or more in the project or a group above it: members see every snippet of the project. */
const MEMBER = 10;

/**
 * `reads`: where deep list pages go (off SQLite's event loop: Db.reader); `searches`: where searches go (the
 * reader too on SQLite; on PostgreSQL a few connections of their own, with a time limit: Db.searcher).
 */
export function snippetsTable(
  db: Kysely<Database>,
  dialect: DialectName,
  reads: Kysely<Database>,
  searches: Kysely<Database>,
) {
  const texts = snippetTextTable(db, dialect, searches);
  /** Whether the statement's `snippets` row has `text` in its title or description, any case. */
  const fieldsHold = (text: string) =>
    sql<boolean>`(${containsText(dialect, sql.ref('snippets.title'), text)} OR ${containsText(dialect, sql.ref('snippets.description'), text)})`;
  /** …or (three characters or more) in a file's path or text. */
  const holds = (text: string) => sql<boolean>`(${fieldsHold(text)} OR EXISTS ${texts.filesOfSnippetHolding(text)})`;
  // The lookups every GET of a snippet or of its raw file makes.
  const byId = compiledOnce(db, 1, (id: number) => db.selectFrom('snippets').selectAll().where('id', '=', id));
  const pathsOfOne = compiledOnce(db, 1, (id: number) =>
    db.selectFrom('snippet_files').select(['snippet_id', 'path']).where('snippet_id', '=', id),
  );
  const byIdWithPaths = compiledOnce(db, 1, (id: number) =>
    db.selectFrom('snippets').selectAll().select(SNIPPET_PATHS[dialect].as('file_paths')).where('id', '=', id),
  );
  const filesOf = compiledOnce(db, 1, (id: number) =>
    db.selectFrom('snippet_files').select(['path', 'blob_id', 'size']).where('snippet_id', '=', id),
  );
  return {
    texts,
    async insert(snippet: Insertable<SnippetsTable>): Promise<Snippet> {
      return db.insertInto('snippets').values(snippet).returningAll().executeTakeFirstOrThrow();
    },
    async findById(id: number): Promise<Snippet | undefined> {
      return (await byId(id))[0];
    },
    /** The snippet with the paths of its head's files, in git's order (as `paths` answers them). */
    async findWithPaths(id: number): Promise<{ snippet: Snippet; paths: string[] } | undefined> {
      const [row] = await byIdWithPaths(id);
      if (!row) return undefined;
      const { file_paths, ...snippet } = row;
      return { snippet, paths: pathsInGitOrder(file_paths) };
    },
    /** The snippet of that project, or the personal snippet when `projectId` is null. */
    async findInProject(projectId: number | null, id: number): Promise<Snippet | undefined> {
      return db
        .selectFrom('snippets')
        .selectAll()
        .where('project_id', projectId === null ? 'is' : '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
    },
    /** Locks the row for the rest of the transaction (PostgreSQL); SQLite transactions are serialised anyway. */
    async lock(id: number): Promise<Snippet | undefined> {
      const q = db.selectFrom('snippets').selectAll().where('id', '=', id);
      return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
    },
    /**
     * The ids of a project's snippets, their rows locked for the rest of the transaction (PostgreSQL), in
     * id order: a delete then waits for a write in progress on any of them, which locks its snippet before
     * its repository, and never holds a repository a writer is waiting for.
     */
    async lockInProject(projectId: number): Promise<number[]> {
      const q = db.selectFrom('snippets').select('id').where('project_id', '=', projectId).orderBy('id');
      const rows = await (dialect === 'postgres' ? q.forUpdate() : q).execute();
      return rows.map((r) => r.id);
    },
    /** Up to `limit` ids of the user's snippets (personal ones only, or all), in id order. */
    async idsOfAuthor(userId: number, which: 'personal' | 'all', limit: number): Promise<number[]> {
      let q = db.selectFrom('snippets').select('id').where('author_id', '=', userId);
      if (which === 'personal') q = q.where('project_id', 'is', null);
      const rows = await q.orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
    /**
     * Makes `to` the author of up to `limit` project snippets of `from` (GitLab's migrate_snippets); answers how many.
     */
    async giveProjectSnippets(from: number, to: number, limit: number): Promise<number> {
      const { numUpdatedRows } = await db
        .updateTable('snippets')
        .set({ author_id: to })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('snippets')
            .select('id')
            .where('author_id', '=', from)
            .where('project_id', 'is not', null)
            .orderBy('id')
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(numUpdatedRows);
    },
    /**
     * The ONE SQL form of "the snippets this viewer may see" (the rule of policy.ts: read_snippet with
     * read_project and read_project_snippets). Project conditions are uncorrelated sets of project ids, so
     * each is computed once per query rather than once per snippet.
     */
    visibleQuery(scope: SnippetScope, filter: SnippetListFilter) {
      let q = db.selectFrom('snippets');
      if (!scope.everything) {
        const { userId, levels } = scope;
        const openProjects = db
          .selectFrom('projects')
          .select('id')
          .where('visibility', 'in', levels)
          .where('snippets_access_level', '=', 'enabled');
        const memberProjects = db
          .selectFrom('projects as p')
          .select('p.id')
          .where('p.snippets_access_level', '<>', 'disabled')
          .where(projectAccessAtLeast(userId ?? -1, MEMBER, 'p'));
        // A personal snippet: its level, or its author. A project snippet: its level in a project open at
        // that level, or any level in a project of the viewer's.
        const personal = (eb: ExpressionBuilder<Database, 'snippets'>) =>
          userId === null
            ? eb('visibility', 'in', levels)
            : sql<boolean>`CASE WHEN author_id = ${userId} THEN 1 = 1 ELSE ${eb('visibility', 'in', levels)} END`;
        const inProject = (eb: ExpressionBuilder<Database, 'snippets'>) =>
          userId === null
            ? eb.and([eb('visibility', 'in', levels), eb('project_id', 'in', openProjects)])
            : sql<boolean>`CASE WHEN ${eb('project_id', 'in', memberProjects)} THEN 1 = 1
                ELSE ${eb.and([eb('visibility', 'in', levels), eb('project_id', 'in', openProjects)])} END`;
        // The alternatives are CASE, not OR: an OR lets a planner gather every match of each side through its
        // own index and sort them all (SQLite's MULTI-INDEX OR: 80-150 ms for a first page of 200,000
        // snippets), where walking the newest first stops at the page's end.
        const kind = filter.projectId !== undefined ? 'project' : filter.kind;
        q = q.where((eb) =>
          kind === 'personal'
            ? personal(eb)
            : kind === 'project'
              ? inProject(eb)
              : sql<boolean>`CASE WHEN project_id IS NULL THEN ${personal(eb)} ELSE ${inProject(eb)} END`,
        );
      }
      const holding = filter.holding;
      if (holding !== undefined) {
        if ([...holding].length < 3) {
          // A trigram index answers three characters or more; shorter texts are looked for in the fields only.
          q = q.where(fieldsHold(holding));
        } else if (filter.commonText) {
          // Many snippets match: walking them latest first finds a page soon; an index would list them all.
          q = q.where(holds(holding));
        } else {
          const ids = filter.holdingIds;
          if (!ids) throw new Error('a text of three characters or more is looked for by visibleRecentlyUpdatedPage');
          // Read by key. PostgreSQL: an array the planner does not look into (a constant one it would estimate
          // element by element); as an IN it joined the ids by hash with every snippet the viewer may see (a walk
          // of all 100,000: 15-30 ms for 13 found).
          q = q.where(
            dialect === 'postgres'
              ? sql<boolean>`snippets.id = ANY(ARRAY(SELECT unnest(${ids}::int[])))`
              : sql<boolean>`snippets.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
          );
        }
      }
      if (filter.visibility) q = q.where('snippets.visibility', '=', filter.visibility);
      const { filePathContains, fileExtensions } = filter;
      if (filePathContains !== undefined || fileExtensions !== undefined) {
        let files = db
          .selectFrom('snippet_files as sf')
          .select('sf.snippet_id')
          .where(sql<boolean>`sf.snippet_id = snippets.id`);
        if (filePathContains !== undefined)
          files = files.where(containsText(dialect, sql.ref('sf.path'), filePathContains));
        if (fileExtensions !== undefined) {
          const endings = fileExtensions.map((e) => containsText(dialect, sql.ref('sf.path'), `.${e}`, 'suffix'));
          files = files.where((eb) => (endings.length ? eb.or(endings) : sql<boolean>`1 = 0`));
        }
        q = q.where((eb) => eb.exists(files));
      }
      const traversal = filter.groupTraversalIds;
      if (traversal !== undefined) {
        const inGroup = db
          .selectFrom('projects as gp')
          .innerJoin('namespaces as gn', 'gn.id', 'gp.namespace_id')
          .select('gp.id')
          .where((eb) =>
            eb.or([eb('gn.traversal_ids', '=', traversal), eb('gn.traversal_ids', 'like', `${traversal}/%`)]),
          );
        q = q.where('project_id', 'in', inGroup);
      }
      if (scope.everything) {
        // Nobody may read the snippets of a project whose snippets feature is disabled, administrators
        // included; for everyone else the visibility rule above already leaves them out.
        const disabled = db.selectFrom('projects').select('id').where('snippets_access_level', '=', 'disabled');
        q = q.where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', 'not in', disabled)]));
      }
      if (filter.authorId !== undefined) q = q.where('author_id', '=', filter.authorId);
      if (filter.projectId !== undefined) q = q.where('project_id', '=', filter.projectId);
      if (filter.kind === 'personal') q = q.where('project_id', 'is', null);
      if (filter.createdAfter) q = q.where('created_at', '>=', filter.createdAfter);
      if (filter.createdBefore) q = q.where('created_at', '<=', filter.createdBefore);
      if (filter.titleContains) q = q.where(containsText(dialect, sql.ref('title'), filter.titleContains));
      const matching = filter.matching;
      if (matching) {
        q = q.where((eb) => eb.or(SEARCHED_COLUMNS.map((column) => matchesText(dialect, column, matching))));
        // SQLite's trigram index narrows the rows first (PostgreSQL's GIN indexes answer the LIKEs themselves).
        if (dialect === 'sqlite' && 'allOf' in matching && !filter.commonText)
          q = q.where(sql<boolean>`snippets.id IN (${texts.snippetsWithFields(matching.allOf)})`);
      }
      if (filter.beforeId !== undefined) q = q.where('id', '<', filter.beforeId);
      return q;
    },
    /**
     * One page of visibleQuery, newest first, with its total. A page past the first thousand rows walks every
     * row before it (GitLab offers no keyset paging for snippets): on SQLite that walk goes where the search's
     * reads go, off the event loop (a last page of a million snippets took 100-400 ms on it).
     */
    visiblePage(scope: SnippetScope, filter: SnippetListFilter, window: PageWindow) {
      // Below an id (page-boundaries.ts), the rows a viewer may not see are stepped over as an offset's are.
      const deep = window.offset >= DEEP_OFFSET || filter.beforeId !== undefined;
      return fetchSnippetPage(deep ? reads : db, this.visibleQuery(scope, filter), window, 'newest');
    },
    /**
     * One page of visibleQuery, the most recently updated first (GitLab's search order), with its total. A
     * `holding` text is looked for as texts.howToFindHolding finds best, a common one by walking the latest
     * snippets first (walkedFirst).
     */
    async visibleRecentlyUpdatedPage(scope: SnippetScope, filter: SnippetListFilter, window: PageWindow) {
      const holding = filter.holding;
      if (holding !== undefined && filter.commonText === undefined && filter.holdingIds === undefined) {
        const needed = Math.max(window.countUpTo ?? MAX_COUNTED, window.offset + window.limit) + 1;
        const how = await texts.howToFindHolding(holding, () => this.walkedFirst(scope, filter, holding, needed));
        filter = { ...filter, ...how };
      }
      return fetchSnippetPage(searches, this.visibleQuery(scope, filter), window, 'updated', !!filter.holdingIds);
    },
    /**
     * The ids of the first `needed` snippets of visibleQuery that hold `text` (three characters or more), the
     * latest updated first, when a walk of the latest WALKED_FIRST.probe, then of the latest
     * WALKED_FIRST.budget finds them (or every one the viewer may see); else null. Not tried where the walk
     * would be slow or wrong: under a filter that may leave the viewer's snippets scattered through the order
     * (an author, project, group, file's name or visibility: the walk's bound is then read far down, 250 ms
     * and more at 100,000 snippets), or on SQLite for a text beyond ASCII (matched there through unicode_lower, a
     * JavaScript call a row, which no walk has been measured with).
     */
    async walkedFirst(scope: SnippetScope, filter: SnippetListFilter, text: string, needed: number) {
      const { authorId, projectId, groupTraversalIds, filePathContains, fileExtensions, visibility } = filter;
      const narrowed = [authorId, projectId, groupTraversalIds, filePathContains, fileExtensions, visibility];
      if (narrowed.some((f) => f !== undefined)) return null;
      if (dialect === 'sqlite' && /[^\0-\x7f]/u.test(text)) return null;
      const { probe, budget, margin } = WALKED_FIRST;
      const probed = await this.recentlyUpdatedHolding(scope, filter, text, needed, probe);
      if (probed.complete) return probed.ids;
      if (probed.ids.length * budget < margin * needed * probe) return null;
      const walked = await this.recentlyUpdatedHolding(scope, filter, text, needed, budget);
      return walked.complete ? walked.ids : null;
    },
    /**
     * The ids of the first `needed` snippets of visibleQuery that hold `text`, the latest updated first, among
     * the latest `walked` of them, and whether they are all there are (`needed` found, or none left unwalked).
     * The walk is bounded by the last of those snippets, read first: bound by values, it keeps the order's
     * index as its range and stops at the bound (bound by a subquery, PostgreSQL read every snippet past it:
     * 175 ms), or at its `needed`th holder.
     */
    async recentlyUpdatedHolding(
      scope: SnippetScope,
      filter: SnippetListFilter,
      text: string,
      needed: number,
      walked: number,
    ) {
      const { holding: _, commonText: __, holdingIds: ___, ...others } = filter;
      const newestFirst = <Q extends SelectQueryBuilder<Database, 'snippets', object>>(q: Q): Q =>
        q.orderBy('snippets.updated_at', 'desc').orderBy('snippets.id', 'desc') as Q;
      // The last snippet walked, and whether any follows it.
      const edge = newestFirst(this.visibleQuery(scope, others).select(['snippets.updated_at', 'snippets.id']))
        .limit(2)
        .offset(walked - 1);
      const [last, next] = (await searches.executeQuery(edge.compile())).rows;
      const holders = newestFirst(
        this.visibleQuery(scope, { ...others, holding: text, commonText: true }).select('snippets.id'),
      )
        .$if(last !== undefined, (q) =>
          q.where(sql<boolean>`(snippets.updated_at, snippets.id) >= (${last.updated_at}, ${last.id})`),
        )
        .limit(needed);
      const ids: number[] = (await searches.executeQuery(holders.compile())).rows.map((h) => h.id);
      return { ids, complete: ids.length === needed || next === undefined };
    },
    /** The newest `limit` of visibleQuery (below `filter.beforeId`), and whether more follow; nothing counted. */
    async visibleNewest(scope: SnippetScope, filter: SnippetListFilter, limit: number) {
      const rows = await this.visibleQuery(scope, filter)
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
    },
    async update(id: number, changes: Updateable<SnippetsTable>): Promise<Snippet> {
      if (setsNothing(changes))
        return db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return db.updateTable('snippets').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('snippet_files').where('snippet_id', '=', id).execute();
      await texts.deleteSnippet(id);
      await db.deleteFrom('user_agent_details').where('snippet_id', '=', id).execute();
      await db.deleteFrom('snippets').where('id', '=', id).execute();
    },
    /** Paths of the files of several snippets (for presenting lists), in git's order. */
    async paths(snippetIds: number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>(snippetIds.map((id) => [id, []]));
      if (!snippetIds.length) return out;
      const rows =
        snippetIds.length === 1
          ? await pathsOfOne(snippetIds[0])
          : await db
              .selectFrom('snippet_files')
              .select(['snippet_id', 'path'])
              .where('snippet_id', 'in', snippetIds)
              .execute();
      rows.sort(byPath);
      for (const r of rows) out.get(r.snippet_id)!.push(r.path);
      return out;
    },
    /** The files of the snippet's head, in git's order. */
    async fileIndex(snippetId: number): Promise<IndexedFile[]> {
      return (await filesOf(snippetId)).sort(byPath);
    },
    /**
     * Replaces the index of the head's files: unchanged ones stay, removed ones go, new and changed ones are
     * written, their text searched when they are within `indexedFileMaxBytes` (the instance's setting).
     * `bodies`: the new blobs a write has in hand (blob id → content), which are then not read back.
     */
    async syncFiles(
      snippetId: number,
      before: IndexedFile[],
      after: IndexedFile[],
      indexedFileMaxBytes: number,
      bodies?: ReadonlyMap<string, Buffer>,
    ): Promise<void> {
      const old = new Map(before.map((f) => [f.path, f.blob_id]));
      const next = new Set(after.map((f) => f.path));
      const gone = before.filter((f) => !next.has(f.path)).map((f) => f.path);
      if (gone.length)
        await db.deleteFrom('snippet_files').where('snippet_id', '=', snippetId).where('path', 'in', gone).execute();
      const changed = after.filter((f) => old.get(f.path) !== f.blob_id);
      if (changed.length) {
        await db
          .insertInto('snippet_files')
          .values(changed.map((f) => ({ snippet_id: snippetId, path: f.path, blob_id: f.blob_id, size: f.size })))
          .onConflict((c) =>
            c.columns(['snippet_id', 'path']).doUpdateSet((eb) => ({
              blob_id: eb.ref('excluded.blob_id'),
              size: eb.ref('excluded.size'),
            })),
          )
          .execute();
      }
      // Only paths the snippet had have text rows to delete (none for a new snippet).
      const replaced = changed.filter((f) => old.has(f.path)).map((f) => f.path);
      await texts.sync(snippetId, [...gone, ...replaced], changed, indexedFileMaxBytes, bodies);
    },
    async insertUserAgentDetail(detail: {
      snippet_id: number;
      user_agent: string;
      ip_address: string;
      created_at: string;
    }): Promise<void> {
      await db
        .insertInto('user_agent_details')
        .values({ ...detail, submitted: 0 })
        .execute();
    },
    async userAgentDetail(snippetId: number) {
      return db.selectFrom('user_agent_details').selectAll().where('snippet_id', '=', snippetId).executeTakeFirst();
    },
  };
}

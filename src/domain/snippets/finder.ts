// GitLab's SnippetsFinder: the snippets a viewer may see, personal and project ones, with the filters lists
// need. Every snippet list goes through findSnippets (the project list, the personal lists, the pages), so
// a list can never show what reading the single snippet would refuse; the rule itself is policy.ts's, and
// its SQL form is the storage's visibleQuery.
import type { Store } from '../../storage/db/store.ts';
import type { Project, Snippet } from '../../storage/db/schema.ts';
import type { SnippetListFilter, SnippetScope } from '../../storage/db/tables/snippets.ts';
import type { ListedSnippet, PageOf, PageWindow } from '../../storage/db/page.ts';
import { can, NO_ACCESS, visibleSnippetLevels, type Viewer } from '../policy.ts';

export type { ListedSnippet, SnippetListFilter };

/** The viewer as the list query needs it: administrators see everything, others by level and membership. */
export function snippetScope(viewer: Viewer): SnippetScope {
  if (can(viewer, 'admin_all_resources', null)) return { everything: true };
  return { everything: false, userId: viewer?.id ?? null, levels: visibleSnippetLevels(viewer, NO_ACCESS) };
}

/** One page (newest first) of the snippets the viewer may see among those the filter names. */
export function findSnippets(
  store: Store,
  viewer: Viewer,
  filter: SnippetListFilter,
  window: PageWindow,
): Promise<PageOf<ListedSnippet>> {
  return store.snippets.visiblePage(snippetScope(viewer), filter, window);
}

/** One page of the snippets the viewer may see among those the filter names, the latest updated first (search). */
export function findSnippetsMatching(
  store: Store,
  viewer: Viewer,
  filter: SnippetListFilter,
  window: PageWindow,
): Promise<PageOf<ListedSnippet>> {
  return store.snippets.visibleRecentlyUpdatedPage(snippetScope(viewer), filter, window);
}

/** The newest `limit` snippets the viewer may see (below `filter.beforeId`): a page keyed by id, not counted. */
export function findNewestSnippets(store: Store, viewer: Viewer, filter: SnippetListFilter, limit: number) {
  return store.snippets.visibleNewest(snippetScope(viewer), filter, limit);
}

/** The projects of project snippets in a list, by id (for their URLs). */
export async function projectsOf(store: Store, snippets: Snippet[]): Promise<Map<number, Project>> {
  const ids = [...new Set(snippets.map((s) => s.project_id).filter((id): id is number => id !== null))];
  const projects = new Map<number, Project>();
  for (const id of ids) {
    const project = await store.projects.findById(id);
    if (project) projects.set(id, project);
  }
  return projects;
}

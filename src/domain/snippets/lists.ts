// Snippets across projects, as a viewer may see them: each one passes the same checks as a single
// snippet (readable project, snippets feature open to the viewer, visible snippet), so a list can never
// show what its page would hide.
import type { Store } from '../../storage/db/store.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { Failure } from '../failure.ts';
import { can, type Viewer } from '../policy.ts';
import { findReadableProject, type ProjectContext } from '../projects.ts';

const SCAN_BATCH = 100;
/** How many snippets one page looks through at most: a bound on its cost, whatever the viewer may see. */
const SCAN_LIMIT = 1000;

export interface VisibleSnippets {
  found: { snippet: Snippet; ctx: ProjectContext }[];
  /** Where the next page starts (snippets with smaller ids), or null when none are left to look at. */
  nextBefore: number | null;
}

/**
 * Up to `limit` snippets (of one author, when given) the viewer may see, newest first, each with its project,
 * among those with ids below `before`. Pages are keyed by id, so a page costs the same however deep it is.
 */
export async function visibleSnippets(
  store: Store,
  viewer: Viewer,
  filter: { authorId?: number },
  page: { before?: number; limit: number },
): Promise<VisibleSnippets> {
  const projects = new Map<number, ProjectContext | null>();
  const found: VisibleSnippets['found'] = [];
  let before = page.before;
  for (let scanned = 0; scanned < SCAN_LIMIT; scanned += SCAN_BATCH) {
    const batch = await store.snippets.newest(filter, before, SCAN_BATCH);
    for (const snippet of batch) {
      before = snippet.id;
      if (!projects.has(snippet.project_id))
        projects.set(snippet.project_id, await readableOrNull(store, viewer, snippet.project_id));
      const ctx = projects.get(snippet.project_id);
      if (ctx && can(viewer, 'read_project_snippets', ctx) && can(viewer, 'read_snippet', { ...ctx, snippet })) {
        found.push({ snippet, ctx });
        if (found.length === page.limit) return { found, nextBefore: before };
      }
    }
    if (batch.length < SCAN_BATCH) return { found, nextBefore: null };
  }
  return { found, nextBefore: before ?? null };
}

async function readableOrNull(store: Store, viewer: Viewer, projectId: number): Promise<ProjectContext | null> {
  try {
    return await findReadableProject(store, viewer, String(projectId));
  } catch (error) {
    if (error instanceof Failure) return null;
    throw error;
  }
}

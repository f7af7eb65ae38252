// Snippets across projects, as a viewer may see them: each one passes the same checks as a single
// snippet (readable project, snippets feature open to the viewer, visible snippet), so a list can never
// show what its page would hide.
import type { Store } from '../../storage/db/store.ts';
import type { Snippet } from '../../storage/db/schema.ts';
import { Failure } from '../failure.ts';
import { can, type Viewer } from '../policy.ts';
import { findReadableProject, type ProjectContext } from '../projects.ts';

const SCAN_BATCH = 100;
/** How many snippets a page looks through at most: a bound on its cost. */
const SCAN_LIMIT = 1000;

/** Up to `limit` snippets (of one author, when given) the viewer may see, newest first, each with its project. */
export async function visibleSnippets(
  store: Store,
  viewer: Viewer,
  filter: { authorId?: number },
  limit: number,
): Promise<{ snippet: Snippet; ctx: ProjectContext }[]> {
  const projects = new Map<number, ProjectContext | null>();
  const found: { snippet: Snippet; ctx: ProjectContext }[] = [];
  for (let offset = 0; offset < SCAN_LIMIT && found.length < limit; offset += SCAN_BATCH) {
    const batch = await store.snippets.newest(filter, offset, SCAN_BATCH);
    for (const snippet of batch) {
      if (!projects.has(snippet.project_id))
        projects.set(snippet.project_id, await readableOrNull(store, viewer, snippet.project_id));
      const ctx = projects.get(snippet.project_id);
      if (ctx && can(viewer, 'read_project_snippets', ctx) && can(viewer, 'read_snippet', { ...ctx, snippet })) {
        found.push({ snippet, ctx });
        if (found.length === limit) break;
      }
    }
    if (batch.length < SCAN_BATCH) break;
  }
  return found;
}

async function readableOrNull(store: Store, viewer: Viewer, projectId: number): Promise<ProjectContext | null> {
  try {
    return await findReadableProject(store, viewer, String(projectId));
  } catch (error) {
    if (error instanceof Failure) return null;
    throw error;
  }
}

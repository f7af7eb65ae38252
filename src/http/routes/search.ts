// GitLab's search API (lib/api/search.rb) for snippets: GET /search, and snippetd's own GET
// /projects/:id/search and /groups/:id/search for the snippets of a project or of a group's projects.
// Signed-in callers only (401 before anything else, as GitLab's `before { authenticate! }`), then GitLab's
// search_rate_limit (429), then the parameters (400), then the project or group (404). The snippets found
// are the finder's, so a result is never one the caller may not read. Answers GitLab's snippet entity,
// paginated; `snippet_blobs` adds the matching files and lines of each (docs/gitlab-compatibility.md#search).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { sendJsonList } from '../prepared-answer.ts';
import { placeSnippets, presentSnippets } from '../snippet-answers.ts';
import { searchSpec } from '../schemas/search.ts';
import { limitSearch } from '../rate-limits.ts';
import { searchSnippetBlobs, searchSnippetTitles, type SearchPlace } from '../../domain/snippets/search.ts';
import { findReadableProject } from '../../domain/projects.ts';
import { findReadableGroup } from '../../domain/groups.ts';
import { can } from '../../domain/policy.ts';

/**
 * The search itself, once the place is known, answered; `place` null: a project whose snippets the caller may
 * not use.
 */
async function searchAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  { search, scope }: SearchParams,
  place: SearchPlace | null,
  answerHeaders: Record<string, string> = {},
) {
  const viewer = currentUser(request);
  const store = storeOf(request);
  // GitLab says which search answered (basic: its database search).
  reply.header('X-Search-Type', 'basic');
  if (scope === 'snippet_titles') {
    const rows = await paginated(request, reply, (window) =>
      place === null
        ? Promise.resolve({ rows: [], total: 0, hasMore: false })
        : searchSnippetTitles(store, viewer, search, window, place),
    );
    const entities = await presentSnippets(request, await placeSnippets(request, rows));
    return sendJsonList(reply.headers(answerHeaders), entities);
  }
  const found = await paginated(request, reply, (window) =>
    place === null
      ? Promise.resolve({ rows: [], total: 0, hasMore: false })
      : searchSnippetBlobs(store, viewer, search, window, place),
  );
  const entities = await presentSnippets(
    request,
    await placeSnippets(
      request,
      found.map((f) => f.snippet),
    ),
  );
  return sendJsonList(
    reply.headers(answerHeaders),
    entities.map((entity, i) => ({ ...entity, matches: found[i].matches })),
  );
}

/**
 * What GitLab checks before its search endpoints run: the caller (401), then the search limit (429), then the
 * parameters (400), all before the project or group is looked up.
 */
async function checkCallerAndParams(request: FastifyRequest) {
  currentUser(request);
  await limitSearch(request);
  return validateRequest(searchSpec, request);
}

type SearchParams = Awaited<ReturnType<typeof checkCallerAndParams>>;

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

export default async function searchRoutes(app: FastifyInstance) {
  /** GET /search — signed in; the snippets the caller may see that match. */
  app.get('/search', async (request, reply) => {
    const params = await checkCallerAndParams(request);
    return searchAnswer(request, reply, params, {}, { 'Content-Transfer-Encoding': 'binary' });
  });

  /** GET /projects/:id/search — signed in; the project's snippets the caller may see that match. */
  const inProject = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = await checkCallerAndParams(request);
    const viewer = request.principal.user;
    const ctx = await findReadableProject(storeOf(request), viewer, idOf(request));
    // As GitLab answers a scope whose feature the caller may not use in the project: nothing found.
    const place = can(viewer, 'read_project_snippets', ctx) ? { projectId: ctx.project.id } : null;
    return searchAnswer(request, reply, params, place);
  };
  app.get('/projects/:id/search', inProject);
  app.get('/projects/:id/-/search', inProject);

  /** GET /groups/:id/search — signed in; the snippets of the group's projects (subgroups too) that match. */
  const inGroup = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = await checkCallerAndParams(request);
    const { group } = await findReadableGroup(storeOf(request), request.principal.user, idOf(request));
    return searchAnswer(request, reply, params, { groupTraversalIds: group.traversal_ids });
  };
  app.get('/groups/:id/search', inGroup);
  app.get('/groups/:id/-/search', inGroup);
}

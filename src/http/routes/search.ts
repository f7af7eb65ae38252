// GitLab's search API (lib/api/search.rb) for snippets: GET /search?scope=snippet_titles. Signed-in callers
// only (401 before anything else, as GitLab's `before { authenticate! }`); the snippets found are the
// finder's, so a result is never one the caller may not read. Answers GitLab's snippet entity, paginated.
import type { FastifyInstance } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { placeSnippets, presentSnippets } from '../snippet-answers.ts';
import { searchSpec } from '../schemas/search.ts';
import { searchSnippetTitles } from '../../domain/snippets/search.ts';

export default async function searchRoutes(app: FastifyInstance) {
  /** GET /search — signed in; the snippets the caller may see whose title, description or file name match. */
  app.get('/search', async (request, reply) => {
    const viewer = currentUser(request);
    const { search } = validateRequest(searchSpec, request);
    const rows = await paginated(request, reply, (window) =>
      searchSnippetTitles(storeOf(request), viewer, search, window),
    );
    // GitLab says which search answered (basic: its database search) and sends the body as is.
    reply.header('X-Search-Type', 'basic').header('Content-Transfer-Encoding', 'binary');
    return presentSnippets(request, await placeSnippets(request, rows));
  });
}

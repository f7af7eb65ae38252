// The one route for paths of any depth, which Fastify's router cannot name by pattern: git over HTTP
// (`/<repository path>.git/info/refs`, `…/git-upload-pack`, `…/git-receive-pack`) and the pages (a project or
// group path of any depth, then its own parts). Each has its own router; this route only asks them in turn.
import type { FastifyInstance } from 'fastify';
import { acceptGitBodies, gitRequestOf, serveGit } from './git-http.ts';
import { hasPage, servePage } from '../pages/index.ts';

export default async function pathRoutes(app: FastifyInstance) {
  acceptGitBodies(app);
  app.route({
    method: ['GET', 'POST'],
    url: '/*',
    config: { scopes: ['read_repository', 'write_repository'] },
    handler: async (request, reply) => {
      const git = gitRequestOf(request);
      if (git) return serveGit(request, reply, git);
      // Not git: an API path served with other methods (405), else a page, else the API's 404. A browser
      // path is always a page, its failures too (GET /users/sign_out is a 404 page, as in GitLab).
      const unserved = app.unservedRequest(request);
      const urlPath = request.url.split('?')[0];
      if (unserved.reason === 'method_not_allowed' && urlPath.startsWith('/api/')) throw unserved;
      if (request.method === 'GET' || request.method === 'HEAD' || hasPage(request, urlPath))
        return servePage(request, reply, urlPath);
      throw unserved;
    },
  });
}

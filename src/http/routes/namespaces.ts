// Namespaces (docs/gitlab-compatibility.md#namespaces): a user's own and groups, by id or full path.
import type { FastifyInstance } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { baseUrl } from '../urls.ts';
import { listNamespacesSpec } from '../schemas/namespaces.ts';
import { namespace } from '../presenters/groups.ts';
import { findNamespace, listNamespaces } from '../../domain/namespaces.ts';

export default async function namespaceRoutes(app: FastifyInstance) {
  /** GET /namespaces — signed in (401); an administrator's are all, anyone else's their own and their groups. */
  app.get('/namespaces', async (request, reply) => {
    const viewer = currentUser(request);
    const p = validateRequest(listNamespacesSpec, request);
    const rows = await paginated(request, reply, (window) => listNamespaces(storeOf(request), viewer, p, window));
    const base = baseUrl(request);
    return rows.map((row) => namespace(row.namespace, base, row.membersCountWithDescendants));
  });

  /** GET /namespaces/:id — by id or URL-encoded full path; 404 Namespace Not Found unless one's own or a member's. */
  app.get('/namespaces/:id', async (request) => {
    const viewer = currentUser(request);
    const { id } = request.params as { id: string };
    const found = await findNamespace(storeOf(request), viewer, id);
    return namespace(found.namespace, baseUrl(request), found.membersCountWithDescendants);
  });
}

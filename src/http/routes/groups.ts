// Groups (docs/gitlab-compatibility.md#groups). `:id` is a number or a URL-encoded full path.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { baseUrl } from '../urls.ts';
import { createGroupSpec, listGroupsSpec, updateGroupSpec } from '../schemas/groups.ts';
import { paginated } from '../pagination.ts';
import { group } from '../presenters/groups.ts';
import {
  authorizeNewGroup,
  createGroup,
  deleteGroup,
  findReadableGroup,
  listGroups,
  updateGroup,
  type GroupListParent,
} from '../../domain/groups.ts';
import { authorize } from '../../domain/policy.ts';

/**
 * A page of GET /groups's answer, of the groups inside the group `parentOf` finds when given (after the parameters
 * are checked, as Grape checks them before the endpoint looks anything up).
 */
async function listed(request: FastifyRequest, reply: FastifyReply, parentOf?: () => Promise<GroupListParent>) {
  const p = validateRequest(listGroupsSpec, request);
  const parent = parentOf && (await parentOf());
  const query = {
    ...p,
    skip_groups: p.skip_groups?.map(Number),
    order_by: p.order_by === 'similarity' ? ('name' as const) : p.order_by,
  };
  const rows = await paginated(request, reply, (window) =>
    listGroups(storeOf(request), request.principal.user, query, window, parent),
  );
  const base = baseUrl(request);
  return rows.map((row) => group(row, base));
}

export default async function groupRoutes(app: FastifyInstance) {
  /** POST /groups — signed in (401); 403 when the user may not create it; 400 for invalid or taken paths. */
  app.post('/groups', async (request, reply) => {
    const viewer = currentUser(request);
    const p = validateRequest(createGroupSpec, request);
    const store = storeOf(request);
    const parent = p.parent_id === undefined ? null : await findReadableGroup(store, viewer, String(p.parent_id));
    await authorizeNewGroup(store, viewer, parent);
    const created = await createGroup(store, viewer, parent, p);
    return reply.code(201).send(group(created, baseUrl(request)));
  });

  /** GET /groups — the groups GitLab's GroupsFinder gives the caller (domain/groups.ts#listGroups), by name. */
  app.get('/groups', (request, reply) => listed(request, reply));

  /**
   * GET /groups/:id/subgroups and /descendant_groups — the same, of the groups directly inside the group or anywhere
   * below it; 404 Group Not Found for a group the caller cannot see.
   */
  for (const [path, descendants] of [
    ['subgroups', false],
    ['descendant_groups', true],
  ] as const) {
    app.get(`/groups/:id/${path}`, (request, reply) =>
      listed(request, reply, async () => {
        const { id } = request.params as { id: string };
        const { group } = await findReadableGroup(storeOf(request), request.principal.user, id);
        return { group, descendants };
      }),
    );
  }

  /** GET /groups/:id — whoever can see the group; 404 Group Not Found otherwise. */
  app.get('/groups/:id', async (request) => {
    const { id } = request.params as { id: string };
    const ctx = await findReadableGroup(storeOf(request), request.principal.user, id);
    return group(ctx.group, baseUrl(request));
  });

  /** DELETE /groups/:id — group owners and admins (403 others); 202, with every group and project below it gone. */
  app.delete('/groups/:id', async (request, reply) => {
    const viewer = currentUser(request);
    const { id } = request.params as { id: string };
    const store = storeOf(request);
    const ctx = await findReadableGroup(store, viewer, id);
    authorize(viewer, 'admin_group', ctx);
    await deleteGroup(store, ctx.group);
    return reply.code(202).send({ message: '202 Accepted' });
  });

  /** PUT /groups/:id — group owners and admins (403 others); 400 for invalid values. */
  app.put('/groups/:id', async (request) => {
    const viewer = currentUser(request);
    const { id } = request.params as { id: string };
    const store = storeOf(request);
    const ctx = await findReadableGroup(store, viewer, id);
    const p = validateRequest(updateGroupSpec, request);
    authorize(viewer, 'admin_group', ctx);
    return group(await updateGroup(store, viewer, ctx.group, p), baseUrl(request));
  });
}

// Projects (docs/gitlab-compatibility.md#projects). `:id` is a number or a URL-encoded full path; a project the
// caller cannot read is always 404 Project Not Found, never 403.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { baseUrl, sshHost } from '../urls.ts';
import * as spec from '../schemas/projects.ts';
import { project, projectWithPermissions } from '../presenters/projects.ts';
import {
  createProject,
  deleteProject,
  findReadableProject,
  listProjects,
  updateProject,
  userProjectsScope,
  type ProjectListQuery,
  type ProjectListScope,
  type ProjectContext,
} from '../../domain/projects.ts';
import { findUser } from '../../domain/users.ts';
import { findReadableGroup } from '../../domain/groups.ts';
import { idBound } from '../../domain/ids.ts';
import { authorize } from '../../domain/policy.ts';

const urls = (request: FastifyRequest) => ({ base: baseUrl(request), sshHost: sshHost(request) });
const presentOne = (request: FastifyRequest, ctx: ProjectContext) =>
  projectWithPermissions(ctx, request.principal.user, urls(request));
const projectId = (request: FastifyRequest) => (request.params as { id: string }).id;
const ORDER_COLUMNS = {
  id: 'id',
  name: 'name',
  path: 'path',
  created_at: 'created_at',
  updated_at: 'last_activity_at',
  last_activity_at: 'last_activity_at',
  similarity: 'name',
  star_count: 'id',
} as const;

/**
 * A page of GET /projects's answer, in the scope `scopeOf` finds when given (after the parameters are checked, as
 * Grape checks them before the endpoint looks anything up).
 */
async function listedProjects(
  request: FastifyRequest,
  reply: FastifyReply,
  scopeOf: (() => Promise<ProjectListScope>) | null = null,
) {
  const p = validateRequest(spec.listProjectsSpec, request);
  const scope = scopeOf && (await scopeOf());
  const query = {
    membership: p.membership,
    owned: p.owned,
    minAccessLevel: p.min_access_level,
    search: p.search,
    searchNamespaces: p.search_namespaces,
    archived: p.archived,
    visibility: p.visibility,
    idAfter: p.id_after === undefined ? undefined : idBound(p.id_after),
    idBefore: p.id_before === undefined ? undefined : idBound(p.id_before),
    lastActivityAfter: p.last_activity_after,
    lastActivityBefore: p.last_activity_before,
    order: { column: ORDER_COLUMNS[p.order_by], direction: p.sort },
  };
  return presentList(request, reply, query, scope);
}

/** The page of `query` in `scope`, each project as GET /projects answers it. */
async function presentList(
  request: FastifyRequest,
  reply: FastifyReply,
  query: ProjectListQuery,
  scope: ProjectListScope,
) {
  const [store, viewer] = [storeOf(request), request.principal.user];
  const rows = await paginated(request, reply, (window) => listProjects(store, viewer, query, scope, window));
  return rows.map((row) => project(row, viewer, urls(request)));
}

export default async function projectRoutes(app: FastifyInstance) {
  /** GET /projects — anyone; the projects the caller can see, paginated; membership, owned, search. */
  app.get('/projects', (request, reply) => listedProjects(request, reply));

  /**
   * GET /users/:user_id/projects — the projects in the user's namespace the caller can see, with GET /projects's
   * filters; the user by id or username (404 User Not Found).
   */
  app.get('/users/:user_id/projects', (request, reply) =>
    listedProjects(request, reply, () => {
      const { user_id } = request.params as { user_id: string };
      return userProjectsScope(storeOf(request), request.principal.user, user_id);
    }),
  );

  /**
   * GET /groups/:id/projects — the group's projects the caller can see (with include_subgroups, those of the
   * groups below too), as GET /projects lists them; 404 Group Not Found for a group they cannot see.
   */
  app.get('/groups/:id/projects', async (request, reply) => {
    const p = validateRequest(spec.listGroupProjectsSpec, request);
    const { id } = request.params as { id: string };
    const { group } = await findReadableGroup(storeOf(request), request.principal.user, id);
    const query = {
      owned: p.owned,
      minAccessLevel: p.min_access_level,
      search: p.search,
      archived: p.archived,
      visibility: p.visibility,
      // GitLab's similarity without a search: by name, ascending whatever the sort.
      order: { column: ORDER_COLUMNS[p.order_by], direction: p.order_by === 'similarity' ? ('asc' as const) : p.sort },
    };
    return presentList(request, reply, query, { namespace: group, below: p.include_subgroups });
  });

  /** GET /projects/:id — whoever can read it; 404 Project Not Found otherwise. */
  app.get('/projects/:id', async (request) =>
    presentOne(request, await findReadableProject(storeOf(request), request.principal.user, projectId(request))),
  );

  /** POST /projects — signed in; in the caller's namespace or a group where they are developer+. */
  app.post('/projects', async (request, reply) => {
    const viewer = currentUser(request);
    const p = validateRequest(spec.createProjectSpec, request, spec.createProjectConstraints);
    return reply.code(201).send(presentOne(request, await createProject(storeOf(request), viewer, p)));
  });

  /** POST /projects/user/:user_id — admins; creates the project in that user's namespace. */
  app.post('/projects/user/:user_id', async (request, reply) => {
    currentUser(request);
    const p = validateRequest(spec.createProjectForUserSpec, request, spec.createProjectConstraints);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    const owner = await findUser(store, p.user_id);
    const { user_id: _ignored, ...input } = p;
    return reply
      .code(201)
      .send(presentOne(request, await createProject(store, owner, { ...input, namespace_id: undefined })));
  });

  /** PUT /projects/:id — maintainers and admins (403 others); a visibility in it, owners and admins. */
  app.put('/projects/:id', async (request) => {
    const viewer = currentUser(request);
    const store = storeOf(request);
    const ctx = await findReadableProject(store, viewer, projectId(request));
    const p = validateRequest(spec.updateProjectSpec, request);
    authorize(viewer, 'admin_project', ctx);
    // Present at all, even unchanged, as GitLab's visibility_attribute_present?.
    if (p.visibility !== undefined) authorize(viewer, 'change_visibility_level', ctx);
    return presentOne(request, await updateProject(store, viewer, ctx, p));
  });

  for (const [action, archived] of [
    ['archive', true],
    ['unarchive', false],
  ] as const) {
    /** POST /projects/:id/archive, /unarchive — owners and admins; 201 with the project. */
    app.post(`/projects/:id/${action}`, async (request, reply) => {
      const viewer = currentUser(request);
      const store = storeOf(request);
      const ctx = await findReadableProject(store, viewer, projectId(request));
      authorize(viewer, 'archive_project', ctx);
      return reply.code(201).send(presentOne(request, await updateProject(store, viewer, ctx, { archived })));
    });
  }

  /** DELETE /projects/:id — owners and admins; 202 {"message":"202 Accepted"}. */
  app.delete('/projects/:id', async (request, reply) => {
    const viewer = currentUser(request);
    const store = storeOf(request);
    const ctx = await findReadableProject(store, viewer, projectId(request));
    authorize(viewer, 'remove_project', ctx);
    await deleteProject(store, ctx);
    return reply.code(202).send({ message: '202 Accepted' });
  });
}

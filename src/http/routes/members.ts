// Members of projects and groups: list (direct and inherited), add, change level, remove.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { baseUrl } from '../urls.ts';
import { addMemberSpec, listMembersSpec, memberIdSpec, updateMemberSpec } from '../schemas/groups.ts';
import { member } from '../presenters/users.ts';
import {
  addMember,
  findMember,
  inheritedFrom,
  removeMember,
  updateMember,
  type MemberSource,
  type OwnerRule,
} from '../../domain/members.ts';
import { findReadableGroup } from '../../domain/groups.ts';
import { findReadableProject } from '../../domain/projects.ts';
import { authorize, can } from '../../domain/policy.ts';
import { invalidFields } from '../../domain/failure.ts';
import { rowId } from '../../domain/ids.ts';

interface Resolved {
  source: MemberSource;
  /** Namespaces whose members are inherited (the ancestors; for a group, including itself). */
  inheritedFrom: number[];
  /** Who may list the members: whoever can read a project; a private group's own members. */
  requireReader(): void;
  requireManager(): void;
  /** May the caller grant, change or take away the Owner level here. */
  ownerRule: OwnerRule;
}

const resolvers = {
  /** Project members are managed by maintainers and admins; the Owner level by owners and admins. */
  projects: async (request: FastifyRequest, id: string): Promise<Resolved> => {
    const viewer = request.principal.user;
    const ctx = await findReadableProject(storeOf(request), viewer, id);
    return {
      source: { type: 'Project', id: ctx.project.id },
      inheritedFrom: inheritedFrom(ctx.namespace),
      requireReader: () => {},
      requireManager: () => authorize(viewer, 'admin_project', ctx),
      ownerRule: { mayManageOwners: can(viewer, 'manage_owners', ctx) },
    };
  },
  /** Group members are managed by owners and admins. */
  groups: async (request: FastifyRequest, id: string): Promise<Resolved> => {
    const viewer = request.principal.user;
    const ctx = await findReadableGroup(storeOf(request), viewer, id);
    return {
      source: { type: 'Namespace', id: ctx.group.id },
      inheritedFrom: inheritedFrom(ctx.group),
      requireReader: () => authorize(viewer, 'read_group_member', ctx),
      requireManager: () => authorize(viewer, 'admin_group', ctx),
      ownerRule: { mayManageOwners: can(viewer, 'manage_owners', ctx) },
    };
  },
};

/**
 * A membership given an end would stay for good here (nothing removes it at that date): refused in the shape
 * of GitLab's own validation error for the field, rather than taken and ignored.
 */
function refuseExpiry(expiresAt: string | undefined) {
  if (expiresAt?.trim()) throw invalidFields({ expires_at: ['is not supported: memberships here do not expire'] });
}

/** A members list's filters, as its parameters give them. */
function memberFilter(request: FastifyRequest) {
  const p = validateRequest(listMembersSpec, request);
  // GitLab filters only by a list given (`present?`); an id past the columns' range names no one.
  return {
    query: p.query || undefined,
    userIds: p.user_ids?.length ? p.user_ids.map((id) => rowId(Number(id))) : undefined,
  };
}

export default async function memberRoutes(app: FastifyInstance) {
  for (const kind of ['projects', 'groups'] as const) {
    const resolve = (request: FastifyRequest) => resolvers[kind](request, (request.params as { id: string }).id);

    /** GET /:kind/:id/members — direct members; whoever can read the project, a private group's own members. */
    app.get(`/${kind}/:id/members`, async (request, reply) => {
      const r = await resolve(request);
      r.requireReader();
      const filter = memberFilter(request);
      const store = storeOf(request);
      const base = r.source.type === 'Project' ? { projectId: r.source.id } : { namespaceIds: [r.source.id] };
      const rows = await paginated(request, reply, (window) => store.members.listPage({ ...base, ...filter }, window));
      return rows.map((m) => member(m, baseUrl(request)));
    });

    /** GET /:kind/:id/members/all — direct and inherited members, each with their highest level. */
    app.get(`/${kind}/:id/members/all`, async (request, reply) => {
      const r = await resolve(request);
      r.requireReader();
      const projectId = r.source.type === 'Project' ? r.source.id : undefined;
      const sources = { projectId, namespaceIds: r.inheritedFrom, ...memberFilter(request) };
      const rows = await paginated(request, reply, (window) => storeOf(request).members.allPage(sources, window));
      return rows.map((m) => member(m, baseUrl(request)));
    });

    /** GET /:kind/:id/members/:user_id — one direct member; 404 Member Not Found. */
    app.get(`/${kind}/:id/members/:user_id`, async (request) => {
      const r = await resolve(request);
      r.requireReader();
      const { user_id } = validateRequest(memberIdSpec, request);
      return member(await findMember(storeOf(request), r.source, user_id), baseUrl(request));
    });

    /** POST /:kind/:id/members — managers; 404 unknown user, 409 Member already exists, 403 an Owner by a non-owner. */
    app.post(`/${kind}/:id/members`, async (request, reply) => {
      currentUser(request);
      const r = await resolve(request);
      const p = validateRequest(addMemberSpec, request);
      r.requireManager();
      refuseExpiry(p.expires_at);
      const added = await addMember(storeOf(request), r.source, p.user_id, p.access_level, r.ownerRule);
      return reply.code(201).send(member(added, baseUrl(request)));
    });

    /** PUT /:kind/:id/members/:user_id — managers; 404 Member Not Found; 403 to or from Owner by a non-owner. */
    app.put(`/${kind}/:id/members/:user_id`, async (request) => {
      currentUser(request);
      const r = await resolve(request);
      const p = validateRequest(updateMemberSpec, request);
      r.requireManager();
      refuseExpiry(p.expires_at);
      const updated = await updateMember(storeOf(request), r.source, p.user_id, p.access_level, r.ownerRule);
      return member(updated, baseUrl(request));
    });

    /** DELETE /:kind/:id/members/:user_id — managers; 204, 404 Member Not Found, 403 an Owner by a non-owner. */
    app.delete(`/${kind}/:id/members/:user_id`, async (request, reply) => {
      currentUser(request);
      const r = await resolve(request);
      const { user_id } = validateRequest(memberIdSpec, request);
      r.requireManager();
      await removeMember(storeOf(request), r.source, user_id, r.ownerRule);
      return reply.code(204).send();
    });
  }
}

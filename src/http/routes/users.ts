// Users and personal access tokens (docs/gitlab-compatibility.md#users-and-tokens).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentUser, storeOf } from '../request.ts';
import { validateRequest } from '../params.ts';
import { paginated } from '../pagination.ts';
import { baseUrl } from '../urls.ts';
import * as spec from '../schemas/users.ts';
import { userFull, userPublic } from '../presenters/users.ts';
import { createdToken, personalAccessToken } from '../presenters/tokens.ts';
import { changeState, createUser, findReadableUser, findUser, updateUser } from '../../domain/users.ts';
import { createToken, listTokens, rotateToken } from '../../domain/tokens.ts';
import { lockedUsers } from '../../domain/sessions.ts';
import { removeUser } from '../../domain/user-removal.ts';
import { badRequest, forbidden, recordNotFound, unauthorized } from '../../domain/failure.ts';
import { publicVisibilityRestricted } from '../../domain/settings.ts';
import type { Scope } from '../../domain/access.ts';
import type { Identity, Token, User } from '../../storage/db/schema.ts';
import { authorize, can } from '../../domain/policy.ts';

const STATE_ACTIONS = ['block', 'unblock', 'deactivate', 'activate'] as const;

export default async function userRoutes(app: FastifyInstance) {
  const present = (viewer: User | null, user: User, base: string, locked: Set<number>, identities: Identity[]) =>
    can(viewer, 'read_user_private', { user_id: user.id })
      ? userFull(
          user,
          base,
          locked.has(user.id),
          identities.filter((i) => i.user_id === user.id),
        )
      : userPublic(user, base, locked.has(user.id));

  /** GET /user — the caller; 401 anonymous. Tokens with read_user suffice. */
  app.get('/user', { config: { scopes: ['read_user'] } }, async (request) => {
    const user = currentUser(request);
    const locked = await lockedUsers(storeOf(request), [user.id]);
    return userFull(user, baseUrl(request), locked.has(user.id), await storeOf(request).identities.forUsers([user.id]));
  });

  /**
   * GET /users?username= — blocked users for administrators only. A visitor may look one user up by username
   * alone, as GitLab lets them (403 otherwise, and with the Public level restricted).
   */
  app.get('/users', { config: { scopes: ['read_user'] } }, async (request, reply) => {
    const viewer = request.principal.user;
    const p = validateRequest(spec.listUsersSpec, request);
    const store = storeOf(request);
    // GitLab's users index: read_users_list, and a visitor must name the one user (no list of everyone).
    const listable = can(viewer, 'read_users_list', { publicRestricted: await publicVisibilityRestricted(store) });
    if (!listable || (!viewer && !p.username)) throw forbidden('Not authorized to access /api/v4/users');
    // GitLab's UsersFinder: blocked users, emails other than public ones and the external filter are
    // administrators' alone.
    const admin = can(viewer, 'admin_all_resources', null);
    // A visitor's list is the one user the username names (UsersFinder's exact match), without other filters.
    const filter = viewer
      ? { ...p, external: admin && p.external, withBlocked: admin, searchesEmails: admin }
      : { username: p.username, withBlocked: false, searchesEmails: false };
    const rows = await paginated(request, reply, (window) => store.users.listPage(filter, window));
    const ids = rows.map((u) => u.id);
    const locked = await lockedUsers(store, ids);
    // Only those the viewer may see in full show identities: no lookup for a list of public profiles.
    const identities = await store.identities.forUsers(
      ids.filter((id) => can(viewer, 'read_user_private', { user_id: id })),
    );
    return rows.map((u) => present(viewer, u, baseUrl(request), locked, identities));
  });

  /** GET /users/:id — signed in (403 for visitors, as GitLab); public profile, full for admins and oneself; 404. */
  app.get('/users/:id', { config: { scopes: ['read_user'] } }, async (request) => {
    const { id } = validateRequest(spec.idSpec, request);
    if (!request.principal.user) throw forbidden('Not authorized!');
    const store = storeOf(request);
    const user = await findReadableUser(store, request.principal.user, id);
    const identities = can(request.principal.user, 'read_user_private', { user_id: user.id })
      ? await store.identities.forUsers([user.id])
      : [];
    return present(request.principal.user, user, baseUrl(request), await lockedUsers(store, [user.id]), identities);
  });

  /** POST /users — admins; 400 invalid params, 409 duplicate username or email. */
  app.post('/users', async (request, reply) => {
    currentUser(request);
    const p = validateRequest(spec.createUserSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const user = await createUser(storeOf(request), p);
    return reply.code(201).send(userFull(user, baseUrl(request)));
  });

  /** PUT /users/:id — admins; 404 unknown user, 409 duplicate email. */
  app.put('/users/:id', async (request) => {
    currentUser(request);
    const p = validateRequest(spec.updateUserSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    const user = await updateUser(store, await findUser(store, p.id), p);
    return userFull(
      user,
      baseUrl(request),
      (await lockedUsers(store, [user.id])).has(user.id),
      await store.identities.forUsers([user.id]),
    );
  });

  /**
   * DELETE /users/:id[?hard_delete=true] — admins; 204, 404 unknown user, 409 while they alone own a group (unless
   * hard_delete, which deletes those groups and their project snippets too). Done before the answer: GitLab answers
   * first and deletes in a background job.
   */
  app.delete('/users/:id', async (request, reply) => {
    currentUser(request);
    const p = validateRequest(spec.deleteUserSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    await removeUser(store, await findUser(store, p.id), { hardDelete: p.hard_delete ?? false });
    return reply.code(204).send();
  });

  /** POST /users/:id/{block,unblock,deactivate,activate} — admins; 201 true, 403 for a refused transition. */
  for (const action of STATE_ACTIONS) {
    app.post(`/users/:id/${action}`, async (request, reply) => {
      currentUser(request);
      const { id } = validateRequest(spec.idSpec, request);
      authorize(currentUser(request), 'admin_all_resources', null);
      const store = storeOf(request);
      await changeState(store, currentUser(request), await findUser(store, id), action);
      return reply.code(201).send(true);
    });
  }

  /** POST /users/:id/personal_access_tokens — admins; the plain token appears only in this answer. */
  app.post('/users/:id/personal_access_tokens', async (request, reply) => {
    currentUser(request);
    const p = validateRequest(spec.createTokenSpec, request);
    authorize(currentUser(request), 'admin_all_resources', null);
    const store = storeOf(request);
    const user = await findUser(store, p.id);
    const { token, plain } = await createToken(store, user, {
      name: p.name,
      scopes: p.scopes as Scope[], // the spec's check refuses any other scope
      expiresAt: p.expires_at ?? null,
    });
    return reply.code(201).send(createdToken(token, plain));
  });

  /** GET /personal_access_tokens — the caller's tokens; admins see all or ?user_id=. Never the token value. */
  app.get('/personal_access_tokens', async (request, reply) => {
    const viewer = currentUser(request);
    const p = validateRequest(spec.listTokensSpec, request);
    // GitLab's restrict_non_admins!: only admins may name another user.
    if (p.user_id !== undefined && !can(viewer, 'admin_token', { user_id: p.user_id })) throw unauthorized();
    const userId = can(viewer, 'admin_all_resources', null) ? p.user_id : viewer.id;
    const store = storeOf(request);
    const filter = {
      userId,
      revoked: p.revoked,
      state: p.state,
      createdBefore: p.created_before,
      createdAfter: p.created_after,
      lastUsedBefore: p.last_used_before,
      lastUsedAfter: p.last_used_after,
      expiresBefore: p.expires_before,
      expiresAfter: p.expires_after,
      search: p.search,
    };
    const rows = await paginated(request, reply, (window) => listTokens(store, filter, window));
    return rows.map(personalAccessToken);
  });

  /** GET /personal_access_tokens/self — the token used for this request. */
  app.get('/personal_access_tokens/self', async (request) => {
    currentUser(request);
    return personalAccessToken(request.principal.token!);
  });

  /** GET /personal_access_tokens/:id — own token, or any for admins; 404 Not found otherwise. */
  app.get('/personal_access_tokens/:id', async (request) => {
    const viewer = currentUser(request);
    const { id } = validateRequest(spec.idSpec, request);
    return personalAccessToken(await visibleToken(request, viewer, id));
  });

  /** POST /personal_access_tokens/self/rotate — revokes the token used for this request; 200 with its successor. */
  app.post('/personal_access_tokens/self/rotate', async (request) => {
    currentUser(request);
    const p = validateRequest(spec.rotateTokenSpec, request);
    const { token, plain } = await rotateToken(storeOf(request), request.principal.token!, p.expires_at ?? null);
    return createdToken(token, plain);
  });

  /**
   * POST /personal_access_tokens/:id/rotate — own token, or any for admins; 200 with its successor. As GitLab,
   * only an administrator learns that a token does not exist (404 Not found); anyone else gets 401.
   */
  app.post('/personal_access_tokens/:id/rotate', async (request) => {
    const viewer = currentUser(request);
    const p = validateRequest({ ...spec.idSpec, ...spec.rotateTokenSpec }, request);
    const token = await storeOf(request).tokens.findById(p.id);
    if (!token || !can(viewer, 'admin_token', token))
      throw can(viewer, 'admin_all_resources', null) ? recordNotFound() : unauthorized();
    const rotated = await rotateToken(storeOf(request), token, p.expires_at ?? null);
    return createdToken(rotated.token, rotated.plain);
  });

  /** DELETE /personal_access_tokens/self — revokes the token used for this request; 204. */
  app.delete('/personal_access_tokens/self', async (request, reply) => {
    currentUser(request);
    await storeOf(request).tokens.revoke(request.principal.token!.id);
    return reply.code(204).send();
  });

  /**
   * DELETE /personal_access_tokens/:id — revokes; 204. As GitLab: a missing token is 404 Not found, and
   * a non-admin's attempt on someone else's token fails its revoke service: 400 Bad request.
   */
  app.delete('/personal_access_tokens/:id', async (request, reply) => {
    const viewer = currentUser(request);
    const { id } = validateRequest(spec.idSpec, request);
    const token = await storeOf(request).tokens.findById(id);
    if (!token) throw recordNotFound();
    if (!can(viewer, 'admin_token', token)) throw badRequest();
    await storeOf(request).tokens.revoke(token.id);
    return reply.code(204).send();
  });
}

/** A token by id as its owner or an admin sees it; anything else looks exactly like a missing one. */
async function visibleToken(request: FastifyRequest, viewer: User, id: number): Promise<Token> {
  const token = await storeOf(request).tokens.findById(id);
  if (!token || !can(viewer, 'admin_token', token)) throw recordNotFound();
  return token;
}

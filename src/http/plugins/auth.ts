// Token -> principal. Reads every carrier GitLab accepts (PRIVATE-TOKEN, private_token, access_token,
// bearer_token, Authorization: Bearer), checks the token's scopes against the method and route, and
// applies Sudo. Runs before every API handler, so a bad token is refused even where anonymous reads work.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Token, User } from '../../storage/db/schema.ts';
import type { Store } from '../../storage/db/store.ts';
import { authenticateToken, scopesOf } from '../../domain/tokens.ts';
import { accessDeniedReason } from '../../domain/policy.ts';
import { Failure, forbidden, insufficientScope, notFound, unauthorized } from '../../domain/failure.ts';
import { authorize } from '../../domain/policy.ts';
import type { Scope } from '../../domain/access.ts';
import { requestParam, storeOf } from '../request.ts';
import { parseRowId } from '../../domain/ids.ts';
import { Utf8Text } from '../../domain/utf8.ts';

export interface Principal {
  /** The user the request acts as (the sudo target when Sudo is used); null when anonymous. */
  user: User | null;
  token: Token | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Scopes accepted besides api / read_api (e.g. read_user on GET /user). */
    scopes?: Scope[];
    /**
     * Scopes accepted besides those for a GET or HEAD only, and named in the refusal of any method (GitLab's
     * allow_access_with_scope with an `if`, as the files API's read_repository).
     */
    readScopes?: Scope[];
  }
}

const READ_METHODS = new Set(['GET', 'HEAD']);
const TOKEN_PARAMS = ['private_token', 'access_token', 'bearer_token'];

function presentedToken(request: FastifyRequest): string | null {
  const header = request.headers['private-token'];
  if (typeof header === 'string' && header !== '') return header;
  for (const key of TOKEN_PARAMS) {
    const value = requestParam(request, key);
    if (typeof value === 'string' && value !== '') return value;
  }
  const authorization = request.headers.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(.+)$/i.exec(authorization.trim()) : null;
  return bearer ? bearer[1] : null;
}

function requireScope(request: FastifyRequest, token: Token): void {
  const scopes = scopesOf(token);
  const extra = request.routeOptions.config?.scopes ?? [];
  const readExtra = request.routeOptions.config?.readScopes ?? [];
  const reading = READ_METHODS.has(request.method);
  const allowed =
    scopes.includes('api') ||
    (scopes.includes('read_api') && reading) ||
    extra.some((s) => scopes.includes(s)) ||
    (reading && readExtra.some((s) => scopes.includes(s)));
  if (!allowed) throw insufficientScope(['api', 'read_api', ...extra, ...readExtra].join(' '));
}

async function applySudo(request: FastifyRequest, store: Store, principal: Principal): Promise<void> {
  const header = request.headers.sudo;
  const param = requestParam(request, 'sudo');
  const target =
    typeof header === 'string' && header !== ''
      ? header
      : typeof param === 'string' || typeof param === 'number' || param instanceof Utf8Text
        ? String(param)
        : null;
  if (target === null || !principal.user || !principal.token) return;
  authorize(principal.user, 'admin_all_resources', null, 'Must be admin to use sudo');
  if (!scopesOf(principal.token).includes('sudo')) throw insufficientScope('sudo');
  const number = parseRowId(target);
  const user = number !== null ? await store.users.findById(number) : await store.users.findByUsername(target);
  if (!user) throw notFound(`User with ID or username '${target}'`);
  principal.user = user;
}

export function registerAuth(app: FastifyInstance, externalUrl: (r: FastifyRequest) => string): void {
  app.decorateRequest('principal', null as unknown as Principal);
  // A callback hook: most reads are anonymous, and those need no promise at all.
  app.addHook('preHandler', (request, _reply, done) => {
    const principal: Principal = { user: null, token: null };
    request.principal = principal;
    const plain = presentedToken(request);
    if (plain === null) return done();
    authenticate(request, principal, plain, externalUrl).then(() => done(), done);
  });
}

async function authenticate(
  request: FastifyRequest,
  principal: Principal,
  plain: string,
  externalUrl: (r: FastifyRequest) => string,
): Promise<void> {
  const store = storeOf(request);
  const { token, user } = await authenticateToken(store, plain);
  const denied = accessDeniedReason(user, externalUrl(request));
  if (denied) throw forbidden(denied);
  requireScope(request, token);
  principal.user = user;
  principal.token = token;
  await applySudo(request, store, principal);
}

/**
 * Before the body is read: the user the token in the request's headers or query string is, for a throttle that
 * counts per user (GitLab's throttled_identifer). Null when it carries none, or one that does not sign anyone
 * in (unknown, expired, revoked, a blocked user's); the request is refused for it later, as any other is. Sudo
 * plays no part: the token's own user is counted.
 */
export async function tokenUserBeforeBody(
  request: FastifyRequest,
  externalUrl: (r: FastifyRequest) => string,
): Promise<User | null> {
  const plain = presentedToken(request);
  if (plain === null) return null;
  try {
    const { user } = await authenticateToken(storeOf(request), plain);
    return accessDeniedReason(user, externalUrl(request)) ? null : user;
  } catch (error) {
    if (error instanceof Failure) return null;
    throw error;
  }
}

/**
 * Before the body is read (plugins/body-limits.ts): whether the token the request carries in its headers or
 * query string authenticates it for this route. Null when it does; else what the request is answered without
 * one: the token's own refusal (401 invalid, 403 blocked or scope), or 401 when it carries none.
 */
export async function refusalBeforeBody(
  request: FastifyRequest,
  externalUrl: (r: FastifyRequest) => string,
): Promise<Failure | null> {
  // No body has been parsed yet, so only the headers and the query string are looked at.
  const plain = presentedToken(request);
  if (plain === null) return unauthorized();
  try {
    await authenticate(request, { user: null, token: null }, plain, externalUrl);
    return null;
  } catch (error) {
    if (error instanceof Failure) return error;
    throw error;
  }
}

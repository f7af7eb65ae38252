// Where the rate limits (domain/rate-limits.ts) apply: every API request, after its caller is known (the
// throttles, off by default); every POST, before its body is read, to the protected paths (their throttle,
// off by default); and each raw file, after it was found readable and before it is read (the raw limits).
// Health and metrics are never limited.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  checkApiThrottle,
  checkProtectedPathsThrottle,
  checkRawLimits,
  checkSearchLimit,
  isProtectedPath,
} from '../domain/rate-limits.ts';
import { sessionUser } from '../domain/sessions.ts';
import { type ApplicationSettings, getSettings } from '../domain/settings.ts';
import type { RateCounters } from '../storage/rate-counters.ts';
import { tokenUserBeforeBody } from './plugins/auth.ts';
import { declaredLength } from './plugins/body-limits.ts';
import { answerBeforeBody } from './plugins/errors.ts';
import { sessionCookieOf } from './pages/sessions.ts';
import { storeOf } from './request.ts';

declare module 'fastify' {
  interface FastifyInstance {
    rateCounters: RateCounters;
  }
}

export function registerApiThrottle(app: FastifyInstance): void {
  // A callback hook: outside /api/ there is nothing to wait for.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.url.startsWith('/api/')) return done();
    throttle(request).then(() => done(), done);
  });
}

/**
 * The settings the throttles of one request go by, read once for both (an API POST meets the protected paths
 * throttle and then the API's). As the request's other lookups: a write not under the read cache reads the
 * settings themselves, for the cache is refreshed only when a request that uses it starts, and a node
 * answering writes alone kept a throttle another node had turned on or off for as long as no read came.
 */
function throttleSettings(request: FastifyRequest): Promise<ApplicationSettings> {
  let settings = readForThrottles.get(request);
  if (!settings) {
    settings = getSettings(storeOf(request));
    readForThrottles.set(request, settings);
  }
  return settings;
}
const readForThrottles = new WeakMap<FastifyRequest, Promise<ApplicationSettings>>();

async function throttle(request: FastifyRequest): Promise<void> {
  const settings = await throttleSettings(request);
  if (!settings.throttle_authenticated_api_enabled && !settings.throttle_unauthenticated_api_enabled) return;
  await checkApiThrottle(request.server.rateCounters, settings, {
    userId: request.principal.user?.id ?? null,
    address: request.ip,
  });
}

/**
 * GitLab's protected paths throttle, as Rack::Attack runs it: for every POST, whatever route (or none) serves
 * its path, before anything else reads it, its body included. A refused request with a body still coming is
 * answered without reading it, and its connection closed.
 */
export function registerProtectedPathsThrottle(app: FastifyInstance, externalUrl: (r: FastifyRequest) => string) {
  // A callback hook: most requests are not POSTs.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method !== 'POST') return done();
    throttleProtectedPath(request, externalUrl).then(
      () => done(),
      (error) => done(declaredLength(request) === 0 ? error : answerBeforeBody(request, error)),
    );
  });
}

async function throttleProtectedPath(request: FastifyRequest, externalUrl: (r: FastifyRequest) => string) {
  const settings = await throttleSettings(request);
  if (!settings.throttle_protected_paths_enabled || !protectedRequestPath(settings, request.url)) return;
  // GitLab's unauthenticated? and throttled_identifer: the API knows its callers by token, the pages by session.
  const api = request.url.startsWith('/api');
  let user: { id: number } | null;
  if (api) user = await tokenUserBeforeBody(request, externalUrl);
  else {
    const session = sessionCookieOf(request);
    user = session ? await sessionUser(request.server.store, session) : null;
  }
  await checkProtectedPathsThrottle(request.server.rateCounters, settings, {
    api,
    userId: user?.id ?? null,
    address: request.ip,
  });
}

/**
 * Whether a request's URL is on a protected path: its path as sent (GitLab's Rack path), or as the router reads
 * it, percent-escapes decoded (`/users/%73ign_in` is the sign-in form here, so it is protected as that form is).
 */
function protectedRequestPath(settings: ApplicationSettings, url: string): boolean {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (isProtectedPath(settings, path)) return true;
  if (!path.includes('%')) return false;
  try {
    return isProtectedPath(settings, decodeURIComponent(path));
  } catch {
    return false;
  }
}

/** What the raw limits count a file under: its project (null for a personal snippet's) and its path there. */
export interface RawLimit {
  projectId: number | null;
  path: string;
}

/**
 * The API's raw limits for a snippet's file (`filePath` null: the snippet has no file), for the caller as the
 * API knows them; what it counted, so that a kept answer (kept-answers.ts) is counted the same way again.
 */
export async function limitSnippetRaw(
  request: FastifyRequest,
  projectId: number | null,
  snippetId: number,
  filePath: string | null,
): Promise<RawLimit> {
  const limit = { projectId, path: `snippets/${snippetId}/${filePath ?? ''}` };
  await limitRaw(request, limit.projectId, limit.path, request.principal.user !== null);
  return limit;
}

/** The raw limits for one file of a project; `path` names the file within the project. */
export async function limitRaw(request: FastifyRequest, projectId: number | null, path: string, signedIn: boolean) {
  const settings = await getSettings(storeOf(request));
  await checkRawLimits(request.server.rateCounters, settings, { projectId, path, signedIn });
}

/** The search limits for the caller (the API's searches and the search page's). */
export async function limitSearch(request: FastifyRequest) {
  const settings = await getSettings(storeOf(request));
  await checkSearchLimit(request.server.rateCounters, settings, {
    userId: request.principal.user?.id ?? null,
    address: request.ip,
  });
}

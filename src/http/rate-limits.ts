// Where the rate limits (domain/rate-limits.ts) apply: every API request, after its caller is known (the
// throttles, off by default), and each raw file, after it was found readable and before it is read (the
// raw limits). Health and metrics are not under /api, so they are never limited.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkApiThrottle, checkRawLimits, checkSearchLimit } from '../domain/rate-limits.ts';
import { getSettings } from '../domain/settings.ts';
import type { RateCounters } from '../storage/rate-counters.ts';
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

async function throttle(request: FastifyRequest): Promise<void> {
  // As the request's other lookups: a write not under the read cache reads the settings themselves, for the
  // cache is refreshed only when a request that uses it starts, and a node answering writes alone kept a
  // throttle another node had turned on or off for as long as no read came.
  const settings = await getSettings(storeOf(request));
  if (!settings.throttle_authenticated_api_enabled && !settings.throttle_unauthenticated_api_enabled) return;
  await checkApiThrottle(request.server.rateCounters, settings, {
    userId: request.principal.user?.id ?? null,
    address: request.ip,
  });
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

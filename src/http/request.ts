// Helpers every route uses to read a request the way Grape does.
import type { FastifyRequest } from 'fastify';
import type { User } from '../storage/db/schema.ts';
import { unauthorized } from '../domain/failure.ts';
import type { Store } from '../storage/db/store.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A writing route that looks up its caller, project and settings through the read cache (usesReadCache). */
    cachedLookups?: boolean;
  }
  interface FastifyRequest {
    /** The read cache's generation when this request's epochs were read (kept answers are filed only under it). */
    cacheGeneration?: number;
  }
  interface FastifyInstance {
    store: Store;
    /** The store read requests use: hot lookups answered from memory (storage/db/read-cache.ts). */
    readStore: Store;
    /** Where repositories live (SNIPPETD_DATA_DIR). */
    dataDir: string;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/** One of Grape's merged params: query string, then body, then route params (later ones win). */
export function requestParam(request: FastifyRequest, name: string): unknown {
  // Own properties only: a parameter is never something inherited such as `constructor`.
  const route = request.params as Record<string, unknown> | undefined;
  if (route && Object.hasOwn(route, name)) return route[name];
  const body = request.body;
  if (isPlainObject(body) && Object.hasOwn(body, name)) return body[name];
  const query = request.query as Record<string, unknown> | undefined;
  return query && Object.hasOwn(query, name) ? query[name] : undefined;
}

/** GitLab's authenticate!: the acting user, or 401. */
export function currentUser(request: FastifyRequest): User {
  const user = request.principal?.user;
  if (!user) throw unauthorized();
  return user;
}

export const isReadRequest = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD';

/**
 * Whether the request's lookups go through the read cache, refreshed when it starts: reads, and the writes
 * whose route says so. Such a route must look up through it nothing it changes (the snippet routes look up
 * their caller, project and settings, and write snippets and their repositories), so it never reads back a
 * cached copy of what it changed; its writes themselves go through the store, uncached.
 */
export const usesReadCache = (request: FastifyRequest) =>
  isReadRequest(request) || request.routeOptions.config?.cachedLookups === true;

/** The store a request looks things up in: the cached one when usesReadCache says so. */
export const storeOf = (request: FastifyRequest) =>
  usesReadCache(request) ? request.server.readStore : request.server.store;

// Helpers every route uses to read a request the way Grape does.
import type { FastifyRequest } from 'fastify';
import type { User } from '../storage/db/schema.ts';
import { forbidden, unauthorized } from '../domain/failure.ts';
import type { Store } from '../storage/db/store.ts';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    /** Where repositories live (SNIPPETD_DATA_DIR). */
    dataDir: string;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/** Grape's merged params: query string, then body, then route params (later ones win). */
export function requestParams(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return {
    ...((request.query as Record<string, unknown>) ?? {}),
    ...(isPlainObject(body) ? body : {}),
    ...((request.params as Record<string, unknown>) ?? {}),
  };
}

/** GitLab's authenticate!: the acting user, or 401. */
export function currentUser(request: FastifyRequest): User {
  const user = request.principal?.user;
  if (!user) throw unauthorized();
  return user;
}

/** GitLab's authenticated_as_admin!: 401 anonymous, 403 for anyone else. */
export function requireAdmin(request: FastifyRequest): User {
  const user = currentUser(request);
  if (!user.admin) throw forbidden();
  return user;
}

/** The store and config every route reads through its app instance. */
export const storeOf = (request: FastifyRequest) => request.server.store;

// What every page module shares: who is looking, and the shape of a page handler.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/policy.ts';

/**
 * The viewer of a page: the user signed in with a session cookie (pages/sessions.ts), read before the page
 * is served. API tokens are for the API only and never make a page visitor known.
 */
export const pageViewer = (request: FastifyRequest): Viewer => request.pageUser;

/** Serves one page; `groups` are the path pattern's groups, each decoded on its own. */
export type PageHandler = (request: FastifyRequest, reply: FastifyReply, groups: string[]) => unknown;

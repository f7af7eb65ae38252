// What every page module shares: who is looking, and how a path goes into a link.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/policy.ts';

/** The viewer of a page. API tokens are for the API only, so until sign-in exists every page is anonymous. */
export const pageViewer = (_request: FastifyRequest): Viewer => null;

/** A repository path as a URL path: each segment encoded, the slashes kept. */
export const encodePath = (filePath: string) => filePath.split('/').map(encodeURIComponent).join('/');

/** Serves one page; `groups` are the path pattern's groups, each decoded on its own. */
export type PageHandler = (request: FastifyRequest, reply: FastifyReply, groups: string[]) => unknown;

// What every page module shares: who is looking, the shape of a page handler, and list paging.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/policy.ts';
import { html, type Html } from '../views/html.ts';

/**
 * The viewer of a page: the user signed in with a session cookie (pages/sessions.ts), read before the page
 * is served. API tokens are for the API only and never make a page visitor known.
 */
export const pageViewer = (request: FastifyRequest): Viewer => request.pageUser;

/** Serves one page; `groups` are the path pattern's groups, each decoded on its own. */
export type PageHandler = (request: FastifyRequest, reply: FastifyReply, groups: string[]) => unknown;

/** A query parameter as a whole number of at least 1, or undefined when absent or not such a number. */
export function positiveQueryNumber(request: FastifyRequest, name: string): number | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,15}$/.test(value)) return undefined;
  return Number(value);
}

interface PageLink {
  href: string;
  label: string;
}

/** The links from one page of a list to the pages before and after it; nothing when it is the only page. */
export function pageLinks(previous?: PageLink, next?: PageLink): Html {
  if (!previous && !next) return html``;
  return html`<nav class="pages" aria-label="Pages">
${previous ? html`<a rel="prev" href="${previous.href}">${previous.label}</a>` : ''}
${next ? html`<a rel="next" href="${next.href}">${next.label}</a>` : ''}
</nav>`;
}

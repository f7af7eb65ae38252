// What every page module shares: who is looking, the shape of a page handler, and list paging.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/policy.ts';
import { html, trusted, type Html } from '../views/html.ts';
import type { FileView } from '../../domain/rendering.ts';
import { humanSize } from '../../domain/snippets/limits.ts';

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

/** A file over the display limit (domain/rendering.ts), said so with its links, as GitLab's blob viewers do. */
export const tooLargeToDisplay = (limit: number, rawUrl: string, downloadUrl: string) =>
  html`<p class="too-large">This file is too large to display: it is larger than ${humanSize(limit)}. You can <a href="${rawUrl}">view it raw</a> or <a href="${downloadUrl}" download>download it</a> instead.</p>`;

/** Said above a file whose rendering went over its time or memory budget (domain/rendering.ts). */
const renderAbandoned = html`<p class="notice">Rendering this file took too long or too much memory, so it is shown as plain text.</p>
`;
/** Said above a file shown plain untried, after an abandoned one above it (domain/rendering.ts#viewOf). */
const renderSkipped = html`<p class="notice">A file above this one took too long or too much memory to render, so this one is shown as plain text.</p>
`;

/**
 * Code as GitLab's blob viewer shows it: numbered lines (render-worker.ts), the gutter as wide as the last
 * line's number.
 */
export function codeBlock(view: Extract<FileView, { kind: 'code' }>): Html {
  const numbered = view.lines !== undefined;
  const digits = numbered ? Math.min(String(view.lines).length, 7) : 0;
  // Focusable: a line wider than the page scrolls inside it, and a keyboard reaches a scrolling region only so.
  const notice = view.renderAbandoned ? renderAbandoned : view.renderSkipped ? renderSkipped : '';
  return html`${notice}<pre class="code${numbered ? ` numbered digits-${digits}` : ''}" tabindex="0"><code class="hljs${view.language ? ` language-${view.language}` : ''}">${trusted(view.html)}</code></pre>`;
}

/** A button that copies the text of the element with this id (shown by the page's script, scripts.ts). */
export const copyButton = (targetId: string, label: string) =>
  html`<button type="button" class="copy" data-copy="${targetId}" aria-label="${label}" hidden>Copy</button>`;

/** A read-only field to copy from, with its copy button. */
export const copyField = (id: string, label: string, value: string) =>
  html`<div class="copy-field"><label for="${id}">${label}</label><span><input id="${id}" readonly value="${value}"> ${copyButton(id, `Copy ${label.toLowerCase()}`)}</span></div>`;

/** The clone URL, to copy. */
export const cloneField = (url: string) => copyField('clone-url', 'Clone with HTTPS', url);
/** A form field's text: '' for a field sent as a list or a hash (`login[a]=x`), as for one not sent. */
export const formText = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The `search` query parameter of a page (a string, else none): the search page's, and its header box's. */
export function pageSearchText(request: FastifyRequest): string {
  const value = (request.query as Record<string, unknown>).search;
  return typeof value === 'string' ? value : '';
}

/** The id prefix of a snippet file's lines on its page: `L10` for a snippet of one file, else `file-2-L10`. */
export const linePrefix = (index: number, count: number) => (count === 1 ? 'L' : `file-${index + 1}-L`);

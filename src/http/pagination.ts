// GitLab's offset pagination, used by every list: page/per_page parameters and the X-* and Link headers
// (lib/gitlab/pagination/offset_header_builder.rb). Totals are not counted past 10,000 rows, so a list
// never scans a huge table to fill X-Total.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_COUNTED, type PageOf, type PageWindow } from '../paging.ts';
import { validateRequest, type ParamSpec } from './params.ts';
import { baseUrl } from './urls.ts';
import { isHash } from './rack-params.ts';

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;
const SECRET_PARAMS = new Set(['private_token', 'access_token', 'bearer_token', 'job_token']);

export const paginationSpec = {
  page: { type: 'integer', default: 1 },
  per_page: { type: 'integer', default: DEFAULT_PER_PAGE, exceptValues: [0] },
} satisfies ParamSpec;

export interface Page {
  page: number;
  perPage: number;
  offset: number;
}

export function parsePage(request: FastifyRequest): Page {
  const p = validateRequest(paginationSpec, request);
  const page = Math.max(p.page, 1);
  const perPage = p.per_page < 0 ? DEFAULT_PER_PAGE : Math.min(p.per_page, MAX_PER_PAGE);
  return { page, perPage, offset: (page - 1) * perPage };
}

const UNRESERVED = /^[\w.~-]*$/;

/** Rails' to_query escaping (CGI.escape): only [a-zA-Z0-9_.~-] stay, spaces become '+'. */
function cgiEscape(value: string): string {
  if (UNRESERVED.test(value)) return value;
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

const isEmpty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : isHash(v) && Object.keys(v).length === 0);

/**
 * Rails' `value.to_query(key)` for any value a query string can hold: nested hashes and arrays (`a[][b]=1`)
 * are followed as Rails follows them, never turned into a string whole (a hash parsed from a query has no
 * prototype, and String() of it throws).
 */
function toQuery(key: string, value: unknown): string {
  if (Array.isArray(value)) {
    const prefix = `${key}[]`;
    return value.length ? value.map((v) => toQuery(prefix, v)).join('&') : `${cgiEscape(prefix)}=`;
  }
  if (isHash(value)) {
    const parts = Object.keys(value)
      .filter((k) => !isEmpty(value[k]))
      .map((k) => toQuery(`${key}[${k}]`, value[k]));
    return (key.includes('[]') ? parts : parts.sort()).join('&');
  }
  return `${cgiEscape(key)}=${cgiEscape(value === undefined || value === null ? '' : String(value))}`;
}

/**
 * The Link URL of any page: the request's own parameters (secrets left out) with page and per_page
 * replaced, in Rails' sorted to_query order. Everything but the page number is encoded once.
 */
function pageLinker(request: FastifyRequest, page: Page): (targetPage: number) => string {
  const params: Record<string, unknown> = {
    ...(request.query as Record<string, unknown>),
    ...(request.params as Record<string, unknown>),
    per_page: page.perPage,
  };
  for (const key of SECRET_PARAMS) delete params[key];
  delete params.page;
  // Hash#to_query sorts the encoded pairs; no other pair starts with "page=", so it sorts the same whatever
  // the page number is.
  const parts = Object.keys(params)
    .filter((k) => params[k] !== undefined && params[k] !== null && !isEmpty(params[k]))
    .map((k) => toQuery(k, params[k]));
  parts.push('page=');
  parts.sort();
  const at = parts.indexOf('page=');
  const before = parts.slice(0, at).join('&');
  const after = parts.slice(at + 1).join('&');
  const prefix = `${baseUrl(request)}${request.url.split('?')[0]}?${before ? `${before}&` : ''}page=`;
  const suffix = after ? `&${after}` : '';
  return (targetPage) => `${prefix}${targetPage}${suffix}`;
}

/** The pagination headers of one page; `total` is null when there are more rows than were counted (10,000; content search 100). */
function pageHeaders(
  request: FastifyRequest,
  page: Page,
  total: number | null,
  hasMore: boolean,
): Record<string, string> {
  const totalPages = total === null ? null : Math.max(1, Math.ceil(total / page.perPage));
  const beyondEnd = totalPages !== null && page.page > totalPages;
  const next = !beyondEnd && (totalPages === null ? hasMore : page.page < totalPages) ? page.page + 1 : null;
  const prev = page.page > 1 && !beyondEnd ? page.page - 1 : null;
  const headers: Record<string, string> = {
    'X-Per-Page': String(page.perPage),
    'X-Page': String(page.page),
    'X-Next-Page': next === null ? '' : String(next),
    'X-Prev-Page': prev === null ? '' : String(prev),
  };
  if (total !== null) {
    headers['X-Total'] = String(total);
    headers['X-Total-Pages'] = String(totalPages);
  }
  const linkFor = pageLinker(request, page);
  const links: string[] = [];
  if (prev !== null) links.push(`<${linkFor(prev)}>; rel="prev"`);
  if (next !== null) links.push(`<${linkFor(next)}>; rel="next"`);
  links.push(`<${linkFor(1)}>; rel="first"`);
  if (totalPages !== null) links.push(`<${linkFor(totalPages)}>; rel="last"`);
  headers.Link = links.join(', ');
  return headers;
}

export function setPageHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  page: Page,
  total: number | null,
  hasMore: boolean,
): void {
  reply.headers(pageHeaders(request, page, total, hasMore));
}

/** One page from storage (`fetch` gets the window page/per_page ask for), with GitLab's headers set. */
export async function paginated<Row>(
  request: FastifyRequest,
  reply: FastifyReply,
  fetch: (window: PageWindow) => Promise<PageOf<Row>>,
): Promise<Row[]> {
  const { rows, headers } = await pageOf(request, parsePage(request), fetch);
  reply.headers(headers);
  return rows;
}

/** One page from storage and GitLab's headers for it. */
export async function pageOf<Row>(
  request: FastifyRequest,
  page: Page,
  fetch: (window: PageWindow) => Promise<PageOf<Row>>,
): Promise<{ rows: Row[]; headers: Record<string, string> }> {
  const { rows, total, hasMore } = await fetch({ offset: page.offset, limit: page.perPage });
  return { rows, headers: pageHeaders(request, page, total, hasMore) };
}

/** One page of an in-memory list and its headers. */
export function arrayPage<T>(
  request: FastifyRequest,
  items: readonly T[],
  page: Page,
): { items: T[]; headers: Record<string, string> } {
  const total = items.length > MAX_COUNTED ? null : items.length;
  const hasMore = items.length > page.offset + page.perPage;
  return {
    items: items.slice(page.offset, page.offset + page.perPage),
    headers: pageHeaders(request, page, total, hasMore),
  };
}

/** One page of an in-memory list, with the headers set. */
export function paginateArray<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  items: readonly T[],
  page: Page = parsePage(request),
): T[] {
  const { items: pageItems, headers } = arrayPage(request, items, page);
  reply.headers(headers);
  return pageItems;
}

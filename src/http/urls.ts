// Every absolute URL we hand out starts from here: the configured external URL, else the request's host.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    externalUrl: string | null;
    /** The external URL's path, '' or '/tools/snippets' (pathPrefixOf). */
    pathPrefix: string;
  }
}

/**
 * The path of the external URL without its last slash: an instance behind https://host/tools/snippets serves
 * below /tools/snippets, as GitLab below its relative URL root.
 */
export const pathPrefixOf = (externalUrl: string | null) =>
  externalUrl ? new URL(externalUrl).pathname.replace(/\/+$/, '') : '';

/**
 * A request's URL with the path prefix taken off, for Fastify's rewriteUrl: the proxy in front may pass the
 * prefix on (GitLab's way) or strip it, and the routes know only what is below it.
 */
export const withoutPathPrefix = (prefix: string) => (url: string) => {
  if (!url.startsWith(prefix)) return url;
  const next = url.charAt(prefix.length);
  if (next === '/') return url.slice(prefix.length);
  return next === '' || next === '?' ? `/${url.slice(prefix.length)}` : url;
};

/** A path of this instance (`/explore/snippets`) as a browser asks for it: below the external URL's path. */
export const sitePath = (request: FastifyRequest, path: string) => request.server.pathPrefix + path;

export function baseUrl(request: FastifyRequest): string {
  return request.server.externalUrl ?? `${request.protocol}://${request.host}`;
}

/** The last base URL sshHost parsed and its host: nearly every request has the same base, and parsing it is not free. */
let lastParsed = { base: '', host: '' };

/** The host part used in ssh_url_to_repo (git@host:path.git). */
export function sshHost(request: FastifyRequest): string {
  const base = baseUrl(request);
  if (base !== lastParsed.base) lastParsed = { base, host: new URL(base).hostname };
  return lastParsed.host;
}

/** A repository path as a URL path: each segment encoded, the slashes kept. */
export const encodePath = (filePath: string) => filePath.split('/').map(encodeURIComponent).join('/');

/**
 * A snippet's page (its web_url); raw_url and files[].raw_url hang below it. A personal snippet (no
 * project) lives at /-/snippets/:id.
 */
export const snippetWebUrl = (base: string, projectPath: string | null, snippetId: number) =>
  projectPath === null ? `${base}/-/snippets/${snippetId}` : `${base}/${projectPath}/-/snippets/${snippetId}`;

/** Where a snippet's repository is cloned over HTTP (http_url_to_repo). */
export const snippetHttpRepoUrl = (base: string, projectPath: string | null, snippetId: number) =>
  projectPath === null ? `${base}/snippets/${snippetId}.git` : `${base}/${projectPath}/snippets/${snippetId}.git`;

/** The same over SSH (ssh_url_to_repo). */
export const snippetSshRepoUrl = (host: string, projectPath: string | null, snippetId: number) =>
  `git@${host}:${projectPath === null ? '' : `${projectPath}/`}snippets/${snippetId}.git`;

/** One file of a snippet at a ref, below its web_url (files[].raw_url). */
export const snippetFileRawUrl = (webUrl: string, ref: string, filePath: string) =>
  `${webUrl}/raw/${encodeURIComponent(ref)}/${encodePath(filePath)}`;

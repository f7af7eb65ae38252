// Every absolute URL we hand out starts from here: the configured external URL, else the request's host.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    externalUrl: string | null;
  }
}

export function baseUrl(request: FastifyRequest): string {
  return request.server.externalUrl ?? `${request.protocol}://${request.host}`;
}

/** The host part used in ssh_url_to_repo (git@host:path.git). */
export function sshHost(request: FastifyRequest): string {
  return new URL(baseUrl(request)).hostname;
}

/** A repository path as a URL path: each segment encoded, the slashes kept. */
export const encodePath = (filePath: string) => filePath.split('/').map(encodeURIComponent).join('/');

/** A snippet's page (its web_url); raw_url and files[].raw_url hang below it. */
export const snippetWebUrl = (base: string, projectPath: string, snippetId: number) =>
  `${base}/${projectPath}/-/snippets/${snippetId}`;

/** One file of a snippet at a ref, below its web_url (files[].raw_url). */
export const snippetFileRawUrl = (webUrl: string, ref: string, filePath: string) =>
  `${webUrl}/raw/${encodeURIComponent(ref)}/${encodePath(filePath)}`;

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

// Headers on every answer: GitLab's security headers, and JSON declared exactly as `application/json`
// (a widely used client compares the header literally; Fastify would add "; charset=utf-8").
import type { FastifyInstance } from 'fastify';

export const SECURITY_HEADERS = { 'x-frame-options': 'SAMEORIGIN', 'x-content-type-options': 'nosniff' } as const;

/** Every API answer may differ by the request's Origin (plugins/cors.ts), as Rack::Cors says whatever was sent. */
export const API_VARY = 'Origin';

/**
 * Every header of a JSON answer but its length: what answers written without Fastify must carry
 * (http/prepared-answer.ts).
 */
export const JSON_HEADERS = { 'content-type': 'application/json', ...SECURITY_HEADERS } as const;

export function registerResponseHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer and needs no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS);
    if (request.url.startsWith('/api/')) {
      const vary = reply.getHeader('vary');
      reply.header('vary', vary === undefined ? API_VARY : `${API_VARY}, ${vary}`);
    }
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json'))
      reply.header('content-type', 'application/json');
    done(null, payload);
  });
}

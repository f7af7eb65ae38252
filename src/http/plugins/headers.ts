// Headers on every answer: GitLab's security headers, and JSON declared exactly as `application/json`
// (a widely used client compares the header literally; Fastify would add "; charset=utf-8").
import type { FastifyInstance } from 'fastify';

export function registerResponseHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer and needs no promise.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('X-Frame-Options', 'SAMEORIGIN');
    reply.header('X-Content-Type-Options', 'nosniff');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json')) reply.header('content-type', 'application/json');
    done(null, payload);
  });
}

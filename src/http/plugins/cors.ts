// Cross-origin access to the API, as GitLab's Rack::Cors rules (config/application.rb) give it: browser
// clients on other sites (gitbeaker in a web page) may call /api/* without the session cookie, the
// instance's own origin with it. Ahead of everything else, as Rack::Cors is ahead of Warden and the API.
// Not @fastify/cors: it routes OPTIONS for every path (here a path's other methods answer 405 with Allow, D8),
// and sets its headers on Fastify's reply, which the prepared answers (prepared-answer.ts) write past.
import type { FastifyInstance, FastifyRequest } from 'fastify';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const ALLOWED_METHODS = METHODS.join(', ');
/** GitLab's `headers_to_expose`: what a script may read of an answer beyond the CORS-safelisted headers. */
const EXPOSED = [
  'Link',
  'X-Total',
  'X-Total-Pages',
  'X-Per-Page',
  'X-Page',
  'X-Next-Page',
  'X-Prev-Page',
  'X-Gitlab-Blob-Id',
  'X-Gitlab-Commit-Id',
  'X-Gitlab-Content-Sha256',
  'X-Gitlab-Encoding',
  'X-Gitlab-File-Name',
  'X-Gitlab-File-Path',
  'X-Gitlab-Last-Commit-Id',
  'X-Gitlab-Ref',
  'X-Gitlab-Size',
  'X-Request-Id',
  'ETag',
].join(', ');

/** Rack::Cors's `resource '/api/*'`: the path alone, `/api` itself included. */
const isApiPath = (url: string) => /^\/api(\/|$|\?)/.test(url);

export function registerCors(app: FastifyInstance, externalUrl: string | null): void {
  // GitLab's first rule: its own URL, with credentials (Rack::Cors compares the Origin as a whole string).
  const ownOrigin = externalUrl?.replace(/\/+$/, '') ?? null;
  const headersFor = (request: FastifyRequest, origin: string): Record<string, string> => {
    const own = origin === ownOrigin;
    const headers: Record<string, string> = {
      'access-control-allow-origin': own ? origin : '*',
      'access-control-allow-methods': ALLOWED_METHODS,
      'access-control-expose-headers': EXPOSED,
      'access-control-max-age': '7200',
    };
    if (own) headers['access-control-allow-credentials'] = 'true';
    const asked = request.headers['access-control-request-headers'];
    if (request.method === 'OPTIONS' && typeof asked === 'string') headers['access-control-allow-headers'] = asked;
    return headers;
  };
  app.addHook('onRequest', (request, reply, done) => {
    // Most requests send no Origin (every client but a browser's script): one look, and on. Their answers still
    // say they vary by it (plugins/headers.ts, prepared-answer.ts).
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !isApiPath(request.url)) return done();
    const asked = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof asked === 'string') {
      // A preflight is answered here, 200 with no body; a method not allowed gets no CORS headers.
      reply.code(200);
      if (METHODS.includes(asked.toUpperCase())) reply.headers(headersFor(request, origin));
      return reply.send();
    }
    // On the raw response, so that answers written past Fastify's reply (prepared-answer.ts) carry them too.
    for (const [name, value] of Object.entries(headersFor(request, origin))) reply.raw.setHeader(name, value);
    done();
  });
}

// The one table from a failure to GitLab's status and body (GitLab keeps the same kind of table in
// lib/api/helpers/snippets/http_response_map.rb), plus the 404/405 answers for unknown routes.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Failure, type FailureReason } from '../../domain/failure.ts';

type Answer = [status: number, body: unknown, headers?: Record<string, string>];

const FAILURES: Record<FailureReason, (f: Failure) => Answer> = {
  not_found: (f) => [404, { message: f.detail ? `404 ${f.detail} Not Found` : '404 Not Found' }],
  record_not_found: () => [404, { message: '404 Not found' }],
  unauthorized: () => [401, { message: '401 Unauthorized' }],
  forbidden: (f) => [403, { message: f.detail ? `403 Forbidden - ${f.detail}` : '403 Forbidden' }],
  conflict: (f) => [409, { message: f.detail }],
  invalid_record: (f) => [400, { message: f.fields }],
  refused: (f) => [400, { message: f.detail }],
  bad_request: (f) => [400, { message: f.detail ? `400 Bad request - ${f.detail}` : '400 Bad request' }],
  invalid_params: (f) => [400, { error: f.detail }],
  service_error: (f) => [400, { message: { error: f.detail } }],
  invalid_params_error: (f) => [422, { message: { error: f.detail } }],
  snippet_access_error: (f) => [403, { message: { error: f.detail } }],
  precondition_failed: () => [412, { message: '412 Precondition Failed' }],
  invalid_token: (f) => [
    401,
    { error: 'invalid_token', error_description: f.detail },
    {
      'WWW-Authenticate': `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${f.detail}"`,
    },
  ],
  insufficient_scope: (f) => [
    403,
    { error: 'insufficient_scope', error_description: INSUFFICIENT_SCOPE, scope: f.detail },
    {
      'WWW-Authenticate': `Bearer realm="Protected by OAuth 2.0", error="insufficient_scope", error_description="${INSUFFICIENT_SCOPE}", scope="${f.detail}"`,
    },
  ],
};

const INSUFFICIENT_SCOPE = 'The request requires higher privileges than provided by the access token.';

export const ROUTE_NOT_FOUND = { error: '404 Not Found' };
export const METHOD_NOT_ALLOWED = { error: '405 Not Allowed' };

export function answerFor(error: unknown): Answer {
  if (error instanceof Failure) return FAILURES[error.reason](error);
  const e = error as FastifyError;
  if (e.statusCode === 413 || e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return [413, { message: '413 Request Entity Too Large' }];
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return [415, { message: '415 Unsupported Media Type' }];
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return [400, { error: 'message body does not match declared format' }];
  return [500, { message: '500 Internal Server Error' }];
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const [status, body, headers] = answerFor(error);
    if (status >= 500) request.log.error({ err: error }, 'unhandled error');
    if (headers) reply.headers(headers);
    if (status === 413) {
      // The client may still be sending the body: answer, then drop the connection instead of reading it all.
      reply.header('Connection', 'close');
      reply.raw.once('finish', () => request.raw.destroy());
    }
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(ROUTE_NOT_FOUND));
}

/**
 * A known path asked with a method it does not serve answers 405 with Allow (GitLab/Grape). Call once
 * every route is registered; it adds a 405 route for each missing method of each path.
 */
export function collectRoutes(app: FastifyInstance): () => void {
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    methodsByUrl.set(route.url, set);
  });
  return () => {
    const all = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];
    for (const [url, methods] of [...methodsByUrl]) {
      if (methods.has('__405__')) continue;
      const missing = all.filter((m) => !methods.has(m));
      if (!missing.length || url === '*' || url.endsWith('*')) continue;
      const allow = all.filter((m) => methods.has(m)).join(', ');
      methodsByUrl.set(url, new Set([...methods, '__405__']));
      app.route({
        method: missing,
        url,
        handler: (_req, reply) => reply.code(405).header('Allow', allow).send(METHOD_NOT_ALLOWED),
      });
    }
  };
}

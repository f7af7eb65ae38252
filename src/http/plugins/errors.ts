// The one table from a failure to GitLab's status and body (GitLab keeps the same kind of table in
// lib/api/helpers/snippets/http_response_map.rb), plus the 404/405 answers for unknown routes.
import { type IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import {
  Failure,
  type FailureReason,
  invalidParams,
  payloadTooLarge,
  routeNotFound,
  type ThrottleMatch,
} from '../../domain/failure.ts';

/** Grape's answer to a body that cannot be parsed as its content type says. */
export const MALFORMED_BODY = 'message body does not match declared format';

/** Status, body (a string is sent as text/plain) and extra headers. */
type Answer = [status: number, body: unknown, headers?: Record<string, string>];

const INSUFFICIENT_SCOPE = 'The request requires higher privileges than provided by the access token.';
const OAUTH_REALM = 'Bearer realm="Protected by OAuth 2.0"';
const serviceBody = (f: Failure) => ({ message: { error: f.detail } });
const gitText = (f: Failure) => `${f.detail}\n`;

const FAILURES: Record<FailureReason, (f: Failure) => Answer> = {
  bad_request: (f) => [400, { message: f.detail ? `400 Bad request - ${f.detail}` : '400 Bad request' }],
  bad_request_param: (f) => [400, { error: f.detail }],
  bad_request_fields: (f) => [400, { message: f.fields }],
  bad_request_message: (f) => [400, { message: f.detail }],
  bad_request_service: (f) => [400, serviceBody(f)],
  bad_request_malformed: () => [400, 'Bad Request', { 'Content-Type': 'text/plain' }],
  unauthorized: () => [401, { message: '401 Unauthorized' }],
  unauthorized_token: (f) => [
    401,
    { error: 'invalid_token', error_description: f.detail },
    { 'WWW-Authenticate': `${OAUTH_REALM}, error="invalid_token", error_description="${f.detail}"` },
  ],
  unauthorized_git: () => [401, 'HTTP Basic: Access denied\n', { 'WWW-Authenticate': 'Basic realm="GitLab"' }],
  forbidden: (f) => [403, { message: f.detail ? `403 Forbidden - ${f.detail}` : '403 Forbidden' }],
  forbidden_message: (f) => [403, { message: f.detail }],
  forbidden_scope: (f) => [
    403,
    { error: 'insufficient_scope', error_description: INSUFFICIENT_SCOPE, scope: f.detail },
    {
      'WWW-Authenticate': `${OAUTH_REALM}, error="insufficient_scope", error_description="${INSUFFICIENT_SCOPE}", scope="${f.detail}"`,
    },
  ],
  forbidden_service: (f) => [403, serviceBody(f)],
  forbidden_git: (f) => [403, gitText(f)],
  forbidden_limit: (f) => [403, { error: [f.detail] }],
  not_found: (f) => [404, { message: f.detail ? `404 ${f.detail} Not Found` : '404 Not Found' }],
  not_found_record: () => [404, { message: '404 Not found' }],
  not_found_route: () => [404, { error: '404 Not Found' }],
  not_found_git: (f) => [404, gitText(f)],
  method_not_allowed: (f) => [405, { error: '405 Not Allowed' }, { Allow: f.detail }],
  method_options: (f) => [204, '', { Allow: f.detail }],
  conflict: (f) => [409, { message: f.detail }],
  request_timeout: () => [408, { message: '408 Request Timeout' }, { Connection: 'close' }],
  search_timeout: () => [408, { error: 'Request timed out' }],
  precondition_failed: () => [412, { message: '412 Precondition Failed' }],
  payload_too_large: () => [413, { message: '413 Request Entity Too Large' }, { Connection: 'close' }],
  payload_too_large_git: () => [413, 'Request body is too large\n', { Connection: 'close' }],
  unsupported_media_type: () => [415, { message: '415 Unsupported Media Type' }],
  too_many_requests: (f) => [
    429,
    { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
    { 'Retry-After': String(f.retryAfter) },
  ],
  throttled: (f) => [429, `${f.detail}\n`, { ...rateLimitHeaders(f.throttle), 'Retry-After': String(f.retryAfter) }],
  headers_too_large: () => [431, { message: '431 Request Header Fields Too Large' }, { Connection: 'close' }],
  unprocessable_service: (f) => [422, serviceBody(f)],
  unprocessable_form: () => [422, { message: '422 Unprocessable Entity' }],
};

/**
 * GitLab's headers on a throttled answer (Gitlab::RackAttack.throttled_response_headers): the throttle, its
 * limit rounded to a minute's worth, what it counted, what is left, and when its window ends.
 */
function rateLimitHeaders(match: ThrottleMatch | null): Record<string, string> {
  if (!match) return {};
  const { name, limit, periodSeconds, observed, resetAt } = match;
  return {
    'RateLimit-Name': name,
    'RateLimit-Limit': String(Math.ceil((limit * 60) / periodSeconds)),
    'RateLimit-Observed': String(observed),
    'RateLimit-Remaining': String(limit > observed ? limit - observed : 0),
    'RateLimit-Reset': String(resetAt),
    'RateLimit-ResetTime': new Date(resetAt * 1000).toUTCString(),
  };
}

/** Errors raised by Fastify or Node rather than by our code, as the failure GitLab would answer. */
function failureOf(error: FastifyError): Failure | null {
  if (error.statusCode === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge();
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new Failure('unsupported_media_type');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return invalidParams(MALFORMED_BODY);
  return null;
}

export function answerFor(error: unknown): Answer {
  const failure = error instanceof Failure ? error : failureOf(error as FastifyError);
  if (!failure) return [500, { message: '500 Internal Server Error' }];
  return FAILURES[failure.reason](failure);
}

const answeredBeforeBody = new WeakSet<FastifyRequest>();

/**
 * Marks `request` as answered with `failure` while its body is still coming (its size, its shape or its
 * caller refused): the connection is closed after the answer rather than kept to read the rest.
 */
export function answerBeforeBody(request: FastifyRequest, failure: Failure): Failure {
  answeredBeforeBody.add(request);
  return failure;
}

/** How long a connection answered before its body was read stays open for the client to read the answer. */
const LINGER_MS = 1000;

/**
 * Closing a connection while the client's body is still arriving makes TCP reset it, and the reset can make
 * the client lose an answer it has not read yet. So Node's close after a `Connection: close` answer is
 * replaced: end the sending side (the client sees the answer and then the end), read nothing more, and close
 * after LINGER_MS, by when the client has read the answer and stopped sending (Go's net/http and NGINX's
 * lingering_close wait the same way).
 */
function closeWithoutLosingAnswer(socket: Socket | null): void {
  if (!socket) return;
  socket.destroySoon = () => {
    socket.end();
    socket.pause();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const [status, body, headers] = answerFor(error);
    if (status >= 500) request.log.error({ err: error }, 'unhandled error');
    if (headers) reply.headers(headers);
    // A 413 may come while the client is still sending, and so may a refusal before the body is read:
    // answer, then drop the connection rather than read it all (Node would, to keep the connection).
    if (status === 413 || answeredBeforeBody.has(request)) {
      reply.header('Connection', 'close');
      closeWithoutLosingAnswer(request.raw.socket);
    }
    if (typeof body === 'string' && !headers?.['Content-Type']) reply.type('text/plain; charset=utf-8');
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((request) => {
    throw app.unservedRequest(request);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    done(hasEmptySegment(request.params) ? routeNotFound() : undefined);
  });
  // Node hands CONNECT to a 'connect' listener, never to the app, and drops the connection when there
  // is none. It is routed like any other method: no route serves it (404), and the connection closes.
  app.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node took its own error listener off the socket before handing it over: a reset with none stopped the process.
    socket.on('error', () => socket.destroy());
    if (head.length) socket.unshift(head);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => socket.end());
    app.routing(req, res);
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The failure for a request no route serves: 405 with Allow when its path is served with other methods, else 404. */
    unservedRequest(request: FastifyRequest): Failure;
  }
}

/**
 * GitLab's router matches no route parameter to an empty segment (`/files//a.rb/raw`); find-my-way does, so
 * such a request is answered as the unknown route it is. The wildcard of git and page URLs may be empty (`/`).
 */
function hasEmptySegment(params: unknown): boolean {
  const named = params as Record<string, unknown> | undefined;
  for (const key in named) if (key !== '*' && named[key] === '') return true;
  return false;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/**
 * A known path asked with a method it does not serve answers 405 with Allow (GitLab/Grape). As in Grape, a
 * route for the request's method and path always comes first: only a request no route serves is asked
 * about (the not-found handler, and the catch-all route of git and pages). The paths are kept in a router
 * of their own, one entry each, rather than as a 405 route per missing method (about 250 Fastify routes,
 * a twentieth of an ephemeral start). Call before any route is registered, and the returned function once
 * every route is.
 */
export function answerUnservedMethods(app: FastifyInstance, routerOptions: { maxParamLength: number }): () => void {
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
    methodsByUrl.set(route.url, set);
  });
  // Each path under one method; its handler is never called, its store is the Allow header.
  const paths = FindMyWay(routerOptions);
  app.decorate('unservedRequest', (request: FastifyRequest) => {
    // Methods outside the list (CONNECT, WebDAV's) are unknown to every path: 404.
    const found = METHODS.includes(request.method) && paths.find('GET', request.url.split('?', 1)[0]);
    if (!found || hasEmptySegment(found.params)) return routeNotFound();
    // Grape routes OPTIONS on every API path (204) and names it first in Allow; pages are Rails', which do not.
    if (!request.url.startsWith('/api/')) return new Failure('method_not_allowed', found.store as string);
    const allow = `OPTIONS, ${found.store}`;
    return new Failure(request.method === 'OPTIONS' ? 'method_options' : 'method_not_allowed', allow);
  });
  return () => {
    for (const [url, methods] of methodsByUrl) {
      if (url.endsWith('*')) continue;
      paths.on('GET', url, () => {}, METHODS.filter((m) => methods.has(m)).join(', '));
    }
  };
}

/**
 * Requests Node refuses before Fastify sees them (the request timeout, headers too large, input that is not
 * HTTP), answered from the same table, on the socket, which is then closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const failure =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new Failure('request_timeout')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new Failure('headers_too_large')
        : new Failure('bad_request');
  const [status, body] = FAILURES[failure.reason](failure);
  const text = JSON.stringify(body);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  socket.destroy();
}

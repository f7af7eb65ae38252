// GitLab's Gitlab::Middleware::HandleMalformedStrings: no valid request holds a NUL character, so one in
// a route parameter (the URL path decoded), the credentials or a parameter (query, JSON, form or multipart
// body) is 400 "Bad Request" as text/plain, before authentication or any route runs. Deciding it here,
// once, is what keeps NUL out of PostgreSQL, whose text columns cannot hold it: a lookup or a write with
// one failed there (500). Two kinds of parameters keep their own rules (docs/gitlab-compatibility.md#d17):
// a file's `content` is stored as a git blob, bytes in which NUL is as good as any other; and paths, whose
// rules (domain/paths.ts) refuse every control character with a message that names the parameter.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Failure } from '../../domain/failure.ts';
import { isHash } from '../rack-params.ts';
import { Utf8Text } from '../../domain/utf8.ts';

const NUL = '\u0000';
/**
 * `content` and `files[][content]`: file contents, snippet and repository files alike. `file_path`,
 * `previous_path` and `path`: file paths (isSafeFilePath) and group or project paths (pathError).
 */
const OWN_RULES = new Set(['content', 'file_path', 'previous_path', 'path']);
/** GitLab looks at nested values down to this depth (files[0][file_path] is at 2); no parameter is deeper. */
const MAX_DEPTH = 2;

function valueHasNul(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  if (value instanceof Utf8Text) return value.bytes.includes(0);
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.some((v) => valueHasNul(v, depth + 1));
  return isHash(value) && paramsHaveNul(value, depth + 1);
}

function paramsHaveNul(params: Record<string, unknown>, depth = 0): boolean {
  for (const key in params) {
    if (!OWN_RULES.has(key) && Object.hasOwn(params, key) && valueHasNul(params[key], depth)) return true;
  }
  return false;
}

/** The credentials and the Sudo target, which are looked up as text. */
function headersHaveNul(request: FastifyRequest): boolean {
  const { authorization, sudo } = request.headers;
  const token = request.headers['private-token'];
  const basic = typeof authorization === 'string' ? /^Basic\s+(.+)$/i.exec(authorization) : null;
  const credentials = basic ? Buffer.from(basic[1], 'base64').toString('utf8') : authorization;
  return [credentials, token, sudo].some((v) => typeof v === 'string' && v.includes(NUL));
}

/** Route parameters and the query string: objects of the router's and the parser's own making. */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export function isMalformed(request: FastifyRequest): boolean {
  // Route parameters are the URL path decoded: `:id`, `:ref`, ... and the whole path of git and page URLs.
  return (
    headersHaveNul(request) ||
    (isObject(request.params) && paramsHaveNul(request.params)) ||
    (isObject(request.query) && paramsHaveNul(request.query)) ||
    // A git request's body is a stream, and a long JSON string one Utf8Text: neither has parameters.
    (isHash(request.body) && paramsHaveNul(request.body))
  );
}

export function registerMalformedStrings(app: FastifyInstance): void {
  // preValidation: the body has been parsed, nothing has read a parameter yet.
  app.addHook('preValidation', (request, _reply, done) => {
    done(isMalformed(request) ? new Failure('bad_request_malformed') : undefined);
  });
}

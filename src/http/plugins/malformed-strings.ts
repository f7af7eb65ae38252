// GitLab's Gitlab::Middleware::HandleMalformedStrings: no valid request holds a NUL character, so one in
// a route parameter (the URL path decoded), the credentials or a parameter (query, JSON, form or multipart
// body) is 400 "Bad Request" as text/plain, before authentication or any route runs. Deciding it here,
// once, is what keeps NUL out of PostgreSQL, whose text columns cannot hold it: a lookup or a write with
// one failed there (500). Two kinds of parameters keep their own rules (docs/gitlab-compatibility.md#d17):
// a file's `content` is stored as a git blob, bytes in which NUL is as good as any other; and paths, whose
// rules (domain/paths.ts) refuse every control character with a message that names the parameter.
// Nor is a string with half of a UTF-16 pair (a JSON `\ud800` alone), in any parameter: it is no text, as
// GitLab's middleware finds a string of invalid UTF-8 malformed; kept, it became U+FFFD in storage and broke
// the answer's URLs (a 500 after the write).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Failure } from '../../domain/failure.ts';
import { isHash } from '../rack-params.ts';
import { isWellFormed, Utf8Text } from '../../domain/utf8.ts';

const NUL = '\u0000';
/**
 * `content` and `files[][content]`: file contents, snippet and repository files alike. `file_path`,
 * `previous_path` and `path`: file paths (isSafeFilePath) and group or project paths (pathError).
 */
const OWN_RULES = new Set(['content', 'file_path', 'previous_path', 'path']);
/** GitLab looks at nested values down to this depth (files[0][file_path] is at 2); no parameter is deeper. */
const MAX_DEPTH = 2;

/** `ownRules`: a NUL is left to the parameter's own rules (OWN_RULES); half a pair never is. */
function valueIsMalformed(value: unknown, depth: number, ownRules: boolean): boolean {
  if (typeof value === 'string') return (!ownRules && value.includes(NUL)) || !isWellFormed(value);
  if (value instanceof Utf8Text) return !ownRules && value.bytes.includes(0);
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.some((v) => valueIsMalformed(v, depth + 1, ownRules));
  return isHash(value) && paramsAreMalformed(value, depth + 1);
}

function paramsAreMalformed(params: Record<string, unknown>, depth = 0): boolean {
  for (const key in params) {
    if (Object.hasOwn(params, key) && valueIsMalformed(params[key], depth, OWN_RULES.has(key))) return true;
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
    (isObject(request.params) && paramsAreMalformed(request.params)) ||
    (isObject(request.query) && paramsAreMalformed(request.query)) ||
    // A git request's body is a stream, and a long JSON string one Utf8Text: neither has parameters.
    (isHash(request.body) && paramsAreMalformed(request.body))
  );
}

export function registerMalformedStrings(app: FastifyInstance): void {
  // preValidation: the body has been parsed, nothing has read a parameter yet.
  app.addHook('preValidation', (request, _reply, done) => {
    done(isMalformed(request) ? new Failure('bad_request_malformed') : undefined);
  });
}

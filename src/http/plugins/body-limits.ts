// How large a request body may be, and for whom, decided before any of it is read
// (docs/gitlab-compatibility.md#body-limits):
// - a caller whose token (header or query string) authenticates may send the largest body a snippet write
//   can need: its content (`snippet_size_limit`, for all its files together) and description, each three
//   times over for their encoding (a form's `%XX` and JSON's `\uXXXX` for text beyond ASCII, as Python's
//   clients send it: three bytes for one), and room for the other parameters; so may a signed-in visitor
//   posting a page's form, and an administrator posting an ephemeral server's seed document;
//   SNIPPETD_MAX_BODY_BYTES, when set, is the limit instead;
// - anyone else may send ANONYMOUS_BODY_BYTES. A larger body is refused with what the request would get
//   without a valid token (401, or the token's own 401/403), before it is read, and the connection closed.
// Git bodies (application/x-git-*) stream to git under their own limit (SNIPPETD_MAX_GIT_BODY_BYTES).
import type { ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Failure, payloadTooLarge } from '../../domain/failure.ts';
import { getSettings } from '../../domain/settings.ts';
import { MAX_DESCRIPTION_BYTES } from '../../domain/snippets/limits.ts';
import { storeOf } from '../request.ts';
import { refusalBeforeBody } from './auth.ts';
import { answerBeforeBody } from './errors.ts';
import { GIT_PATH } from '../routes/git-http.ts';
import { isSignedInForm } from '../pages/index.ts';

/**
 * What a caller without a valid token may send: a sign-in form, or the parameters of an API call that
 * carries its token in the body (a token, a title, a short file), with room to spare. Reading and checking
 * this much costs a few milliseconds, so anonymous requests cannot cost the server more than that each.
 */
export const ANONYMOUS_BODY_BYTES = 1024 * 1024;
/**
 * Bodies over ANONYMOUS_BODY_BYTES read and worked on at once; the next waits, unread, for one to be answered.
 * Each takes about five times its size while it is parsed and stored (a 50 MiB create about 250 MiB): four at
 * once took 1 GB. Small bodies never wait.
 */
export const LARGE_BODIES_AT_ONCE = 2;
/**
 * A large body, once its turn came, must keep coming at this pace on average after the first seconds, or it is
 * answered 408 and its turn given to the next: two bodies sent a few bytes a second held both turns for the
 * whole request timeout (300 s), every other large write waiting (helper-70). 16 KiB/s is 128 kbit/s.
 */
const LARGE_BODY_BYTES_PER_SECOND = 16 * 1024;
const LARGE_BODY_GRACE_MS = 10_000;
/** SNIPPETD_MAX_BODY_BYTES's own upper bound: no body is ever larger. */
export const MAX_BODY_CEILING = 1024 * 1024 * 1024;
/** Title, file paths, visibility and the other short parameters of a snippet write. */
const OTHER_PARAMETERS_BYTES = 64 * 1024;
const GIT_BODY = /^application\/x-git-/;

/** A git client's body for git's own URL, which git-http.ts streams to git under its own limit. */
const isGitBody = (request: FastifyRequest) =>
  request.routeOptions.url === '/*' && GIT_BODY.test(request.headers['content-type'] ?? '') && isGitPath(request.url);

function isGitPath(url: string): boolean {
  try {
    return GIT_PATH.test(decodeURIComponent(url.split('?', 1)[0]));
  } catch {
    return false;
  }
}

/** The largest body a snippet write may need at this snippet size limit. */
export const snippetBodyBytes = (snippetSizeLimit: number) =>
  Math.min(MAX_BODY_CEILING, 3 * (snippetSizeLimit + MAX_DESCRIPTION_BYTES) + OTHER_PARAMETERS_BYTES);

/** The body's declared length; null when it comes chunked, with no length (and 0 when there is none). */
export function declaredLength(request: FastifyRequest): number | null {
  const header = request.headers['content-length'];
  if (header !== undefined) return Number(header);
  return request.headers['transfer-encoding'] === undefined ? 0 : null;
}

/**
 * `maxBodyBytes`: SNIPPETD_MAX_BODY_BYTES, or null to follow `snippet_size_limit`. Register before any other
 * preParsing hook.
 */
export function registerBodyLimits(
  app: FastifyInstance,
  maxBodyBytes: number | null,
  externalUrl: (r: FastifyRequest) => string,
): void {
  const anonymousLimit = Math.min(ANONYMOUS_BODY_BYTES, maxBodyBytes ?? ANONYMOUS_BODY_BYTES);
  const largeBodies = new Turns(LARGE_BODIES_AT_ONCE);
  // A callback hook: most requests have no body, or one small enough for anyone, and need no promise.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const declared = declaredLength(request);
    if ((declared !== null && declared <= anonymousLimit) || isGitBody(request)) return done(null, payload);
    limited(request, reply.raw, payload, declared).then((body) => done(null, body as typeof payload), done);
  });

  async function limited(
    request: FastifyRequest,
    response: ServerResponse,
    payload: NodeJS.ReadableStream,
    declared: number | null,
  ) {
    const limit = maxBodyBytes ?? snippetBodyBytes((await getSettings(storeOf(request))).snippet_size_limit);
    if (declared !== null && declared > limit) throw answerBeforeBody(request, payloadTooLarge());
    const refusal = await refusalFor(request, externalUrl);
    if (refusal && declared !== null) throw answerBeforeBody(request, refusal);
    // Chunked and refused: counted as it comes, and cut off where a declared length would have been refused.
    if (refusal) return capped(request, payload, anonymousLimit, refusal);
    // Its turn ends when its answer is sent or its connection closes, whichever comes first.
    await largeBodies.take(response);
    return steadily(request, declared !== null ? payload : capped(request, payload, limit, null));
  }
}

/** What a request that may not send a large body gets instead; null when it may. */
async function refusalFor(
  request: FastifyRequest,
  externalUrl: (r: FastifyRequest) => string,
): Promise<Failure | null> {
  // An unknown route answers as it always does (404, or 405 for a path served with other methods), whether
  // the router knows no route for it or the catch-all route of git and pages caught it and it is not git's.
  if (request.routeOptions.url === '/*' && !isGitPath(request.url) && request.method === 'POST') {
    // A page's form (a snippet's files) may be as large as the API's write, from a signed-in visitor.
    if (await isSignedInForm(request)) return null;
  }
  if (request.is404 || (request.routeOptions.url === '/*' && !isGitPath(request.url))) {
    return request.server.unservedRequest(request);
  }
  const refusal = await refusalBeforeBody(request, externalUrl);
  // Outside the API (the sign-in form, git paths with another content type) no token is asked for: a large
  // body there, with or without one, is simply too large. The ephemeral seed control asks for one as the API
  // does: a document's files are as large as the snippets it makes.
  const takesTokens =
    request.routeOptions.url?.startsWith('/api/v4/') || request.routeOptions.url === '/-/snippetd/seed';
  if (!takesTokens) return payloadTooLarge();
  return refusal;
}

/** At most `count` holders at once; the others wait in order of arrival. */
class Turns {
  private waiting: (() => void)[] = [];

  constructor(private free: number) {}

  /**
   * Waits for a turn, held until `response` closes (sent, or its connection gone). One that closes while it
   * waits, or closed before, takes none.
   */
  take(response: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      if (response.closed) return resolve();
      // Held from the moment it is given, in the same turn of the event loop: no close can come between.
      const hold = () => {
        response.once('close', () => this.give());
        resolve();
      };
      if (this.free > 0) {
        this.free--;
        return hold();
      }
      const gone = () => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        resolve();
      };
      const turn = () => {
        response.off('close', gone);
        hold();
      };
      this.waiting.push(turn);
      response.once('close', gone);
    });
  }

  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/** `payload`, failing with 408 once it comes slower than LARGE_BODY_BYTES_PER_SECOND after the grace. */
function steadily(request: FastifyRequest, payload: NodeJS.ReadableStream): NodeJS.ReadableStream {
  const started = Date.now();
  let received = 0;
  const paced = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      clearInterval(check);
      callback();
    },
  });
  const check = setInterval(() => {
    const elapsed = Date.now() - started;
    if (elapsed > LARGE_BODY_GRACE_MS && received < (elapsed / 1000) * LARGE_BODY_BYTES_PER_SECOND)
      paced.destroy(answerBeforeBody(request, new Failure('request_timeout')));
  }, 1000).unref();
  paced.on('close', () => clearInterval(check));
  payload.on('error', (error) => paced.destroy(error));
  paced.on('error', () => {}); // heard by whoever reads the body; a GET's is read by no one
  return payload.pipe(paced);
}

/** `payload`, failing with `refusal` (413 when null) once more than `limit` bytes came. */
function capped(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
  limit: number,
  refusal: Failure | null,
): NodeJS.ReadableStream {
  let received = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > limit) return callback(answerBeforeBody(request, refusal ?? payloadTooLarge()));
      callback(null, chunk);
    },
  });
  payload.on('error', (error) => counted.destroy(error));
  // Whoever reads the body hears its errors through a listener of its own. A GET's or a HEAD's body is read by
  // no one, and an error nobody listens for (its connection reset) stopped the process.
  counted.on('error', () => {});
  return payload.pipe(counted);
}

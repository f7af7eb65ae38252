// The one place whole answers are kept (the template routes'). A route checks its parameters first,
// then calls sendAnswer with what its answer depends on and a function that builds it (authorise, one
// domain call, present). While the database is unchanged, asking again for the same answer costs one
// lookup: the read cache (storage/db/read-cache.ts) holds it and drops it when the database changes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeOf } from './request.ts';
import { baseUrl } from './urls.ts';
import { urlHasSecret } from '../logging.ts';
import { prepareJsonAnswer, sendPrepared, type PreparedAnswer } from './prepared-answer.ts';
import { acceptedEncoding, type ContentEncoding } from './plugins/compression.ts';

/** A 200 answer as a route builds it. */
export interface Answer {
  json: string;
  /** Headers besides our JSON headers (a list page's pagination headers). */
  headers?: Record<string, string>;
  /**
   * What decided it: 'builtin', data shipped with snippetd and the database, so it is kept until the
   * database changes; 'git', a repository too, so it is never kept (a commit changes no database row).
   */
  source: 'builtin' | 'git';
}

/**
 * What an answer depends on besides its source, the database, the caller and the URL with its Host
 * (every answer is kept per caller and URL; `Link` headers name the host): the year, for answers that
 * fill it in (licenses), else null.
 */
export interface DependsOn {
  year: number | null;
}

interface KeptAnswer {
  answer: PreparedAnswer;
  source: Answer['source'];
}

const keepRules = { keep: (k: KeptAnswer) => k.source === 'builtin', bytes: (k: KeptAnswer) => k.answer.size };

/** URLs longer than this are answered without keeping anything (their `Link` headers repeat them). */
const MAX_KEPT_URL_LENGTH = 2048;

/**
 * Sends the answer kept for this caller, `dependsOn` and URL, else the one `build` makes (kept if its
 * source allows). Call it only after the request's parameters were checked: a kept answer stands for
 * the project lookup, the permission check and the domain call, never for parameter checks. Errors
 * `build` throws are answered as usual and never kept.
 */
export async function sendAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  dependsOn: DependsOn,
  build: () => Promise<Answer>,
): Promise<FastifyReply> {
  const encoding = acceptedEncoding(request);
  if (!keepable(request)) return sendPrepared(reply, (await prepared(build, encoding)).answer);
  // Caller, Host and URL apart by newlines, which neither a Host header nor a URL can hold. Each encoding
  // is kept apart too, compressed once.
  const caller = request.principal.user?.id ?? 'anonymous';
  const key = `answer:${caller}:${dependsOn.year ?? ''}:${encoding ?? ''}\n${baseUrl(request)}\n${request.url}`;
  const kept = await storeOf(request).memo(key, () => prepared(build, encoding), keepRules);
  return sendPrepared(reply, kept.answer);
}

async function prepared(build: () => Promise<Answer>, encoding: ContentEncoding | null): Promise<KeptAnswer> {
  const { json, headers, source } = await build();
  return { answer: await prepareJsonAnswer(json, headers, encoding), source };
}

/**
 * Whether the URL says everything the answer depends on, and is short enough to keep under: not with a
 * token in the URL, nor with a body (not on GET today).
 */
const keepable = (request: FastifyRequest) =>
  request.body == null && request.url.length <= MAX_KEPT_URL_LENGTH && !urlHasSecret(request.url);

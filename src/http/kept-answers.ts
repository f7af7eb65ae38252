// The one place whole answers are kept (templates, a snippet, the snippet lists, the API's raw files). A route
// checks its parameters first, then calls sendAnswer with what its answer depends on and a function that
// builds it (authorise, one domain call, present). While the database is unchanged, asking again for the
// same answer costs one lookup: the read cache (storage/db/read-cache.ts) holds it and drops it when the
// database changes. Why: the lookups, the policy and presenting were most of a hot read's work (issue 31).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeOf } from './request.ts';
import { baseUrl } from './urls.ts';
import { urlHasSecret } from '../logging.ts';
import { prepareJsonAnswer, prepareRawAnswer, sendPrepared, type PreparedAnswer } from './prepared-answer.ts';
import { acceptedEncoding } from './plugins/compression.ts';
import { limitRaw, type RawLimit } from './rate-limits.ts';
import type { RawContent } from './raw.ts';

/** A 200 answer as a route builds it. */
export interface Answer {
  /** The JSON, or its UTF-8 bytes (a long list, prepared-answer.ts#listJson). */
  json: string | Buffer;
  /** Headers besides our JSON headers (a list page's pagination headers). */
  headers?: Record<string, string>;
  /**
   * What decided it: 'builtin', data shipped with snippetd and the database, or 'database' alone (a
   * snippet's rows and git objects, found through its branch's row), so it is kept until the database
   * changes; 'git', a template project's repository, which is never kept.
   */
  source: 'builtin' | 'database' | 'git';
}

/**
 * What an answer depends on besides its source, the database, the caller and the URL with its Host
 * (every answer is kept per caller and URL; `Link` headers name the host): the year, for answers that
 * fill it in (licenses), else null.
 */
export interface DependsOn {
  year: number | null;
}

/** An answer that depends on nothing besides its source, the caller and the URL. */
export const NOTHING_MORE: DependsOn = { year: null };

/**
 * A raw file's 200 answer as a route builds it: the route counts it against the raw limits (limitSnippetRaw in
 * http/rate-limits.ts) as it always did, and a kept answer is counted under `limit` each time it is sent.
 */
export interface RawAnswer {
  raw: { path: string | null; content: RawContent };
  limit: RawLimit;
  source: 'database';
}

interface KeptAnswer {
  answer: PreparedAnswer;
  source: Answer['source'];
  limit?: RawLimit;
}

/** Larger answers are sent without being kept: a raw file can be as large as a snippet may be. */
const MAX_KEPT_ANSWER_BYTES = 1024 * 1024;

const keepRules = {
  keep: (k: KeptAnswer) =>
    k.source !== 'git' && Buffer.isBuffer(k.answer.body) && k.answer.size <= MAX_KEPT_ANSWER_BYTES,
  bytes: (k: KeptAnswer) => k.answer.size,
};

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
  const { kept } = await keptOrBuilt(request, `${dependsOn.year ?? ''}:${encoding ?? ''}`, async () => {
    const { json, headers, source } = await build();
    return { answer: await prepareJsonAnswer(json, headers, encoding), source };
  });
  return sendPrepared(reply, kept.answer);
}

/** sendAnswer for a raw file (never compressed); a kept one is counted against the raw limits again. */
export async function sendRawAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  build: () => Promise<RawAnswer>,
): Promise<FastifyReply> {
  const { kept, built } = await keptOrBuilt(request, 'raw', async () => {
    const { raw, limit, source } = await build();
    return { answer: prepareRawAnswer(raw.path, raw.content), source, limit };
  });
  if (!built && kept.limit)
    await limitRaw(request, kept.limit.projectId, kept.limit.path, request.principal.user !== null);
  return sendPrepared(reply, kept.answer);
}

/** The answer kept for the caller, `variant` and URL, else `build`'s; `built` says which. */
async function keptOrBuilt(
  request: FastifyRequest,
  variant: string,
  build: () => Promise<KeptAnswer>,
): Promise<{ kept: KeptAnswer; built: boolean }> {
  if (!keepable(request)) return { kept: await build(), built: true };
  // Caller, Host and URL apart by newlines, which neither a Host header nor a URL can hold. Each encoding
  // is kept apart too, compressed once.
  const caller = request.principal.user?.id ?? 'anonymous';
  const key = `answer:${caller}:${variant}\n${baseUrl(request)}\n${request.url}`;
  let built = false;
  const kept = await storeOf(request).memoAnswer(
    key,
    () => {
      built = true;
      return build();
    },
    { ...keepRules, since: request.cacheGeneration ?? null },
  );
  return { kept, built };
}

/**
 * Whether the URL says everything the answer depends on: not with a token in the URL, nor with a body (not on
 * GET today). A long URL makes a key the read cache does not keep (its MAX_KEY_CHARS).
 */
const keepable = (request: FastifyRequest) => request.body == null && !urlHasSecret(request.url);

// JSON answers written straight to the socket: status, every header and the body bytes, prepared once
// where they never change (built-in template lists and files). They skip Fastify's reply pipeline, so
// its onSend hooks do not run for them: they carry every header those hooks would add (JSON_HEADERS,
// the same list the hook in plugins/headers.ts sets).
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeOf } from './request.ts';
import { baseUrl } from './urls.ts';
import { JSON_HEADERS } from './plugins/headers.ts';

/** A 200 answer (errors go through Fastify's error handler). */
export interface PreparedAnswer {
  /** Header names and values in one flat list, as Node's writeHead takes them. */
  headers: string[];
  body: Buffer;
  /** Bytes held: the body and every header name and value. */
  size: number;
}

/** URLs longer than this are answered without keeping anything (their `Link` headers repeat them). */
const MAX_KEPT_URL_LENGTH = 2048;

/** An answer with our JSON headers, `extra` headers (names lower-cased, as Fastify sends them) and the JSON. */
export function prepareJsonAnswer(json: string, extra: Record<string, string> = {}): PreparedAnswer {
  const body = Buffer.from(json);
  const headers: string[] = [];
  for (const [name, value] of Object.entries(extra)) headers.push(name.toLowerCase(), value);
  for (const [name, value] of Object.entries(JSON_HEADERS)) headers.push(name, value);
  headers.push('content-length', String(body.length));
  return { headers, body, size: headers.reduce((sum, h) => sum + h.length, body.length) };
}

/** Writes a prepared answer; Fastify is told the reply is handled here. */
export function sendPrepared(reply: FastifyReply, answer: PreparedAnswer): FastifyReply {
  reply.hijack();
  reply.raw.writeHead(200, answer.headers);
  reply.raw.end(answer.body);
  return reply;
}

export interface BuiltAnswer {
  answer: PreparedAnswer;
  /** False when the answer depends on more than the database, the caller and the URL (git, say). */
  keep: boolean;
  /** The answer is kept elsewhere too (a built-in template's, a frozen list's page): it costs no bytes again. */
  shared?: boolean;
}

/** Kept when the builder says so, weighed by the bytes an entry adds (the key is counted by the cache). */
const keptAnswerRules = { keep: (b: BuiltAnswer) => b.keep, bytes: (b: BuiltAnswer) => (b.shared ? 0 : b.answer.size) };

/**
 * Answers a read request with an answer kept whole by the read cache, so that asking again, while the
 * database is unchanged, costs one lookup. The key is the caller, `variant` (what else the answer
 * depends on, such as the year), the base URL (for `Link`) and the URL, apart by newlines, which neither
 * a Host header nor a URL can hold. A URL carrying a token, a very long URL, or a request with a body (not
 * on GET today) is answered without keeping anything.
 */
export async function sendKeptAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  build: () => Promise<BuiltAnswer>,
  variant = '',
): Promise<FastifyReply> {
  if (!keepable(request)) return sendPrepared(reply, (await build()).answer);
  const key = `answer:${request.principal.user?.id ?? 'anonymous'}:${variant}\n${baseUrl(request)}\n${request.url}`;
  const built = await storeOf(request).memo(key, build, keptAnswerRules);
  return sendPrepared(reply, built.answer);
}

/** Whether the URL says everything the answer depends on, and is short enough to keep under. */
export const keepable = (request: FastifyRequest) =>
  request.body == null && request.url.length <= MAX_KEPT_URL_LENGTH && !request.url.includes('token=');

const JSON_HEADER_LIST = Object.entries(JSON_HEADERS).flat();

/** Writes a JSON answer on a raw response (also for errors Fastify raises before any hook runs). */
export function writeJson(raw: ServerResponse, status: number, json: string): void {
  // A string body goes out with the headers in one piece; its length is counted in bytes.
  raw.writeHead(status, [...JSON_HEADER_LIST, 'content-length', String(Buffer.byteLength(json))]);
  raw.end(json);
}

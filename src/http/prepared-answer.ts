// JSON and raw file answers written straight to the socket: status, every header and the body bytes, built
// once so that they can be kept whole (kept-answers.ts). They skip Fastify's reply pipeline, so its onSend
// hooks do not run for them: they carry every header those hooks would add (JSON_HEADERS and
// SECURITY_HEADERS, the lists the hook in plugins/headers.ts sets, and API_VARY: they answer the API alone).
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { API_VARY, JSON_HEADERS, SECURITY_HEADERS } from './plugins/headers.ts';
import { type RawContent, rawHeaders, sizeOf } from './raw.ts';
import { type ContentEncoding, compressJson, JSON_COMPRESSION_THRESHOLD } from './plugins/compression.ts';
import { CHARS_A_TURN, utf8Bytes } from '../domain/utf8.ts';

/** A 200 answer (errors go through Fastify's error handler). */
export interface PreparedAnswer {
  /** Header names and values in one flat list, as Node's writeHead takes them. */
  headers: string[];
  /** The bytes, or a large blob streamed as the client reads (never kept: its bytes are not held). */
  body: RawContent;
  /** Bytes held: the body and every header name and value. */
  size: number;
}

/**
 * An answer with our JSON headers, `extra` headers (names lower-cased, as Fastify sends them) and the JSON,
 * compressed in `encoding` when it passes the threshold, as plugins/compression.ts compresses the others.
 */
export async function prepareJsonAnswer(
  json: string | Buffer,
  extra: Record<string, string> = {},
  encoding: ContentEncoding | null = null,
): Promise<PreparedAnswer> {
  // A long answer (a project's template of megabytes) is encoded a stretch at a time.
  let body: Buffer =
    typeof json !== 'string' ? json : json.length <= CHARS_A_TURN ? Buffer.from(json) : await utf8Bytes(json);
  const headers: string[] = [];
  for (const [name, value] of Object.entries(extra)) headers.push(name.toLowerCase(), value);
  for (const [name, value] of Object.entries(JSON_HEADERS)) headers.push(name, value);
  if (encoding && body.length >= JSON_COMPRESSION_THRESHOLD) {
    body = await compressJson(body, encoding);
    headers.push('content-encoding', encoding, 'vary', `${API_VARY}, accept-encoding`);
  } else headers.push('vary', API_VARY);
  return withLength(headers, body);
}

/** A raw file's answer, with the headers http/raw.ts gives it (never compressed, as through Fastify). */
export function prepareRawAnswer(filePath: string | null, content: RawContent): PreparedAnswer {
  const headers: string[] = [];
  for (const [name, value] of Object.entries(rawHeaders(filePath, content))) headers.push(name, value);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.push(name, value);
  headers.push('vary', API_VARY);
  return withLength(headers, content);
}

function withLength(headers: string[], body: RawContent): PreparedAnswer {
  headers.push('content-length', String(sizeOf(body)));
  return { headers, body, size: headers.reduce((sum, h) => sum + h.length, sizeOf(body)) };
}

/**
 * JSON.stringify of a list, an item at a time, the event loop taking its turn after each stretch of about a
 * mebi-character: a page of a hundred snippets or commits may hold a megabyte each (descriptions, messages),
 * which one JSON.stringify made in 0.5-2 s. A long one comes as its UTF-8 bytes, each item's encoded on its
 * own turns and joined once: encoding the whole string at once held the loop as long again.
 */
export async function listJson(items: readonly object[]): Promise<string | Buffer> {
  const jsons: string[] = [];
  let chars = 0;
  let sinceTurn = 0;
  for (const item of items) {
    const json = JSON.stringify(item);
    jsons.push(json);
    chars += json.length;
    sinceTurn += json.length;
    if (sinceTurn > CHARS_A_TURN) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  if (chars <= CHARS_A_TURN) return `[${jsons.join(',')}]`;
  const parts: Buffer[] = [];
  for (const json of jsons) parts.push(parts.length ? COMMA : OPENING, await utf8Bytes(json));
  parts.push(CLOSING);
  return Buffer.concat(parts);
}
const [OPENING, COMMA, CLOSING] = ['[', ',', ']'].map((c) => Buffer.from(c));

/** A list answered as JSON through Fastify's reply (its hooks set the headers and compress), made by listJson. */
export async function sendJsonList(reply: FastifyReply, items: readonly object[]): Promise<FastifyReply> {
  return reply.type('application/json').send(await listJson(items));
}

/** Writes a prepared answer; Fastify is told the reply is handled here. */
export function sendPrepared(reply: FastifyReply, answer: PreparedAnswer): FastifyReply {
  reply.hijack();
  reply.raw.writeHead(200, answer.headers);
  // HEAD: the headers say the length; a large blob is not read only for Node to drop its bytes.
  if (reply.request.method === 'HEAD') reply.raw.end();
  else if (Buffer.isBuffer(answer.body)) reply.raw.end(answer.body);
  // A blob that fails to read midway ends the connection: the client sees fewer bytes than announced.
  else pipeline(answer.body.open(), reply.raw, (error) => error && reply.raw.destroy());
  return reply;
}

const JSON_HEADER_LIST = Object.entries(JSON_HEADERS).flat();

/** Writes a JSON answer on a raw response (also for errors Fastify raises before any hook runs). */
export function writeJson(raw: ServerResponse, status: number, json: string): void {
  // A string body goes out with the headers in one piece; its length is counted in bytes.
  raw.writeHead(status, [...JSON_HEADER_LIST, 'content-length', String(Buffer.byteLength(json))]);
  raw.end(json);
}

// Compressed answers, in brotli or gzip as the client accepts: pages (HTML), the embed script and the
// stylesheet once they pass a kilobyte (a snippet page with a megabyte of highlighted code is 4.5 MB of
// HTML, mostly the same few class names), and JSON answers once they pass JSON_COMPRESSION_THRESHOLD.
// Pages ask for it (`sendCompressed`) rather than every answer getting it, because the answers that must
// stay as they are share routes with pages: raw files (served beside pages by the catch-all route) keep
// Workhorse's exact bytes, Content-Length and strong ETag, and git over HTTP keeps its own answers. JSON
// is recognised by its type (`application/json`, which no raw file or git answer has), in an onSend hook
// and for the answers written past it (prepared-answer.ts). Request bodies are never decompressed here:
// git's gzip-encoded requests go to `git http-backend` as sent (routes/git-http.ts).
import zlib from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Brotli at quality 4: the 2.8 MB page of a highlighted megabyte of JavaScript in 60 ms (217 KB), where
 * brotli's default 11 takes 13.5 s (158 KB) of a libuv thread, and gzip 107 ms (235 KB).
 */
const BROTLI_QUALITY = 4;

export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCompress, {
    global: false,
    encodings: ['br', 'gzip'],
    threshold: 1024,
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    globalDecompression: false,
  });
}

/** Sends a page, script or stylesheet (its Content-Type set) compressed as the request accepts. */
export function sendCompressed(reply: FastifyReply, body: string | Buffer): FastifyReply {
  reply.compress(body);
  return reply;
}

/**
 * JSON answers shorter than this go as they are: compressing a single snippet's 1.5 KB cost 43-81 µs of CPU
 * a request (101 µs without), to save about 1 KB; a page of 20 (15 KB) costs 5-105 µs more (about 500
 * without) and shrinks to 1.2 KB (bench/json-compression.ts, bench/RESULTS.md).
 */
export const JSON_COMPRESSION_THRESHOLD = 4096;

/**
 * JSON up to this size is compressed on the event loop (at most about 0.1 ms, less than handing it to
 * libuv's threads and back); larger answers are compressed on those threads, so no answer holds the loop
 * for longer whatever its size.
 */
const ON_LOOP_LIMIT = 32 * 1024;

/**
 * The fastest levels: a page of 20 snippets (16 KB) in 25-30 µs of brotli 1 (950 bytes) where quality 4
 * takes 75-95 µs (635 bytes), and in 35-45 µs of gzip 1 (960 bytes) where the default 6 takes 65-80 µs
 * (905 bytes) (bench/json-encoders.ts). A JSON answer is made for one request.
 */
const JSON_BROTLI = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } };
const JSON_GZIP = { level: 1 };

export type ContentEncoding = 'br' | 'gzip';

/**
 * The encoding the request accepts for a compressed answer, by its Accept-Encoding q-values (brotli first
 * when they tie; `identity` preferred or neither accepted: null, the answer goes as it is).
 */
export function acceptedEncoding(request: FastifyRequest): ContentEncoding | null {
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string' || header === '') return null;
  const choice = negotiate(header.toLowerCase().replace(/\bx-gzip\b/g, 'gzip'), ['br', 'gzip', 'identity']);
  return choice === 'br' || choice === 'gzip' ? choice : null;
}

/** `body` in `encoding`: on the event loop while small, on libuv's threads when larger. */
export function compressJson(body: Buffer, encoding: ContentEncoding): Promise<Buffer> {
  if (body.length <= ON_LOOP_LIMIT) {
    try {
      return Promise.resolve(
        encoding === 'br' ? zlib.brotliCompressSync(body, JSON_BROTLI) : zlib.gzipSync(body, JSON_GZIP),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    if (encoding === 'br') zlib.brotliCompress(body, JSON_BROTLI, done);
    else zlib.gzip(body, JSON_GZIP, done);
  });
}

/**
 * JSON answers sent through Fastify, compressed when the client accepts it and they pass the threshold.
 * Registered after plugins/headers.ts, whose hook makes every JSON type exactly `application/json`.
 */
export function registerJsonCompression(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (
      reply.getHeader('content-type') !== 'application/json' ||
      (typeof payload !== 'string' && !Buffer.isBuffer(payload)) ||
      reply.hasHeader('content-encoding')
    )
      return done(null, payload);
    const length = Buffer.byteLength(payload);
    if (length < JSON_COMPRESSION_THRESHOLD) return done(null, payload);
    const encoding = acceptedEncoding(request);
    if (!encoding) return done(null, payload);
    compressJson(Buffer.isBuffer(payload) ? payload : Buffer.from(payload), encoding).then((compressed) => {
      reply.header('content-encoding', encoding);
      reply.header('vary', varyOnEncoding(reply.getHeader('vary')));
      reply.header('content-length', compressed.length);
      done(null, compressed);
    }, done);
  });
}

/** A Vary header that names Accept-Encoding besides what it named. */
export function varyOnEncoding(vary: unknown): string {
  const named =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
  if (named.some((v) => v === '*' || v.toLowerCase() === 'accept-encoding')) return named.join(', ');
  return [...named, 'accept-encoding'].join(', ');
}

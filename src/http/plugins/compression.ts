// Compressed answers for pages (HTML), the embed script and the stylesheet, in brotli or gzip as the
// client accepts, once they pass a kilobyte: a snippet page with a megabyte of highlighted code is 4.5 MB
// of HTML, mostly the same few class names. Pages ask for it (`sendCompressed`) rather than every answer
// getting it, because the answers that must stay as they are share routes with pages: raw files (served
// beside pages by the catch-all route) keep Workhorse's exact bytes, Content-Length and strong ETag, and
// git over HTTP keeps its own answers. Request bodies are never decompressed here: git's gzip-encoded
// requests go to `git http-backend` as sent (routes/git-http.ts).
import zlib from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyReply } from 'fastify';

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

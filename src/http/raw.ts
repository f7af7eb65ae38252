// Raw file answers (docs/gitlab-compatibility.md#snippet-raw, Workhorse's content headers): the type
// sniffed from the bytes, inline for text, images, video and PDF, attachment for SVG and everything else,
// and headers that keep a browser from running anything served this way.
import { isUtf8 } from 'node:buffer';
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LargeBlob } from '../storage/git/repository.ts';

/** A raw file's bytes: whole, or a large blob streamed as the client reads (GitRepository.sendableBlob). */
export type RawContent = Buffer | LargeBlob;

/** The bytes that tell a raw file's type, and its size. */
const headOf = (content: RawContent) => (Buffer.isBuffer(content) ? content : content.head);
export const sizeOf = (content: RawContent) => (Buffer.isBuffer(content) ? content.length : content.size);

interface Sniffed {
  type: string;
  inline: boolean;
}

const MAGIC: [bytes: number[], type: string, offset?: number][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [[0x47, 0x49, 0x46, 0x38], 'image/gif'],
  [[0x42, 0x4d], 'image/bmp'],
  [[0x00, 0x00, 0x01, 0x00], 'image/x-icon'],
  [[0x25, 0x50, 0x44, 0x46, 0x2d], 'application/pdf'],
  [[0x1a, 0x45, 0xdf, 0xa3], 'video/webm'],
  [[0x66, 0x74, 0x79, 0x70], 'video/mp4', 4],
];

const startsWith = (buf: Buffer, bytes: number[], offset = 0) =>
  buf.length >= offset + bytes.length && bytes.every((b, i) => buf[offset + i] === b);

function isUtf8Text(buf: Buffer, size: number): boolean {
  const head = buf.subarray(0, 8192);
  return !head.includes(0) && isUtf8(head.length < size ? trimPartial(head) : head);
}

/** Drops a UTF-8 sequence cut off at the end of a sample. */
function trimPartial(buf: Buffer): Buffer {
  const end = buf.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = buf[end - i];
    if ((byte & 0xc0) === 0xc0) return buf.subarray(0, end - i);
    if ((byte & 0xc0) !== 0x80) break;
  }
  return buf;
}

/**
 * An SVG document's start: an XML declaration, comments and a doctype before `<svg`. A comment ends at its
 * first `-->`, as in XML, so the text is read one way only: with a lazy `<!--[\s\S]*?-->` a run of comments
 * could be read 2^n ways, all of which were tried before a file that was not SVG was found out (26 empty
 * comments: 2.7 s of the event loop, at every raw request).
 */
const SVG_START = /^(<\?xml[^>]*>\s*)?(<!--(?:(?!-->)[\s\S])*-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i;

/** The type of a file that starts with `content` and is `size` bytes long (its first 8 KiB are enough). */
export function sniff(content: Buffer, size = content.length): Sniffed {
  if (
    content.subarray(0, 12).toString('latin1').startsWith('RIFF') &&
    content.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return { type: 'image/webp', inline: true };
  for (const [bytes, type, offset] of MAGIC) {
    if (startsWith(content, bytes, offset)) return { type, inline: true };
  }
  if (isUtf8Text(content, size)) {
    const head = content.subarray(0, 4096).toString('utf8').trimStart();
    if (SVG_START.test(head)) return { type: 'image/svg+xml', inline: false };
    return { type: 'text/plain; charset=utf-8', inline: true };
  }
  return { type: 'application/octet-stream', inline: false };
}

/**
 * Content-Disposition with an ASCII fallback name and the exact UTF-8 name (RFC 6266); the kind alone for a blob read
 * by its id (`filePath` empty), which has no name (GitLab's send_git_blob).
 */
export function contentDisposition(kind: 'inline' | 'attachment', filePath: string): string {
  if (filePath === '') return kind;
  let name = filePath.split('/').pop() ?? filePath;
  if (name.toLowerCase().endsWith('.xhtml')) name = name.slice(0, name.indexOf('.'));
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_')
    .replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The headers of a raw file's API answer; a snippet without files answers its legacy content, untyped. */
export function rawHeaders(filePath: string | null, content: RawContent): Record<string, string> {
  if (filePath === null) return { 'content-type': 'text/plain', 'content-disposition': 'attachment' };
  const { type, inline } = sniff(headOf(content), sizeOf(content));
  return {
    'content-type': type,
    'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', filePath),
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'no-cache',
  };
}

export function sendRaw(
  reply: FastifyReply,
  filePath: string,
  content: RawContent,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.headers({ ...rawHeaders(filePath, content), ...headers }).send(bodyOf(reply, content));
}

/**
 * What Fastify sends for `content`: the bytes, or a stream of a large blob with its length said first. A
 * blob's parts may go while it is sent (its snippet deleted): the answer is then cut off, at its start as
 * after its first bytes, not handed to the error handler with a raw file's headers already set.
 */
function bodyOf(reply: FastifyReply, content: RawContent) {
  if (Buffer.isBuffer(content)) return content;
  reply.header('content-length', content.size);
  const parts = content.open();
  const body = new PassThrough();
  parts.on('error', () => reply.raw.destroy());
  body.on('close', () => parts.destroy());
  return parts.pipe(body);
}

/** What GitLab's SendsBlob adds to a raw file's max-age (Rails' expires_in, in its order). */
const SHARED_REVALIDATION = 'must-revalidate, stale-while-revalidate=60, stale-if-error=300, s-maxage=60';

/**
 * A raw file at its web path, with the headers GitLab's Workhorse sends to keep it inert: every kind of
 * text as text/plain, only images other than SVG inline (`?inline=false` downloads them too), a policy
 * that runs nothing, and the blob id as a strong ETag (304 when the client has it). Cached as GitLab's
 * SendsBlob says: publicly only what anyone may read, an hour when the caller says a full commit id named the
 * content and a minute otherwise, and at most a minute in a shared cache, since a reader may lose access.
 */
export function sendWebRaw(
  request: FastifyRequest,
  reply: FastifyReply,
  file: { path: string; content: RawContent; blobId: string },
  caching: { public: boolean; atCommitId: boolean },
): FastifyReply {
  const { type } = sniff(headOf(file.content), sizeOf(file.content));
  const inline =
    (request.query as Record<string, unknown>).inline !== 'false' &&
    (type.startsWith('text/plain') || (type.startsWith('image/') && type !== 'image/svg+xml'));
  const etag = `"${file.blobId}"`;
  reply
    .header('Content-Type', type)
    .header('Content-Disposition', contentDisposition(inline ? 'inline' : 'attachment', file.path))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'; sandbox")
    .header('ETag', etag)
    .header(
      'Cache-Control',
      `max-age=${caching.atCommitId ? 3600 : 60}, ${caching.public ? 'public' : 'private'}, ${SHARED_REVALIDATION}`,
    );
  const known = request.headers['if-none-match'];
  if (typeof known === 'string' && known.split(',').some((tag) => tag.trim() === etag)) return reply.code(304).send();
  return reply.send(bodyOf(reply, file.content));
}

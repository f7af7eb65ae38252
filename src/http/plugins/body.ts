// Request bodies as GitLab accepts them: JSON, application/x-www-form-urlencoded with Rack's nested
// keys, and multipart/form-data (parts in order, file parts read as text). An empty body with a JSON
// content type (common on DELETE) is an empty hash. How large a body may be, and for whom, is decided
// before any of it is read (plugins/body-limits.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { Piscina } from 'piscina';
import { addParam, MAX_PARAMS, parseRackQuery } from '../rack-params.ts';
import { JsonLimitScanner } from '../json-limits.ts';
import { Failure, invalidParams, payloadTooLarge } from '../../domain/failure.ts';
import { shippedFile } from '../../shipped-files.ts';
import { MALFORMED_STRING, Utf8Text } from '../../domain/utf8.ts';
import { type ParsedBody, type ParseTask, revivedTexts } from '../body-parse-worker.ts';
import { answerBeforeBody, MALFORMED_BODY } from './errors.ts';
import { declaredLength } from './body-limits.ts';

/**
 * A JSON or form body up to this size is parsed on the event loop (about 3 ms); a larger one in a worker
 * thread, since parsing takes time in proportion to the body: over 100 ms for a 50 MiB snippet.
 */
const PARSE_IN_WORKER_BYTES = 1024 * 1024;

type ParseInWorker = (body: BodyBytes) => Promise<unknown>;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A YAML (or JSON) document parsed in the body parse thread: the `yaml` package takes about 1.5 ms a KiB,
     * and a mapping's keys are checked in pairs. Rejects with the parser's error.
     */
    parseYaml(text: string): Promise<unknown>;
  }
}

/** The content types parsed as JSON: `application/json` and `application/*+json` (Fastify lowercases them). */
export const JSON_TYPE = /^application\/(.+\+)?json/;

export function registerBodyParsers(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  let workers: Piscina | null = null;
  const run = (task: ParseTask): Promise<unknown> => {
    // One thread: large bodies are rare, and each parse holds about three times its body in memory.
    // From source the worker is body-parse-worker.ts (run through tsx, as its parent is); built, .js.
    const worker = import.meta.url.endsWith('.ts') ? 'body-parse-worker.ts' : 'body-parse-worker.js';
    if (!workers) {
      workers = new Piscina({ filename: shippedFile('http', worker), maxThreads: 1 });
      // A thread failing outside a task must not end the server (an 'error' event nobody hears would).
      workers.on('error', (error: Error) => process.emitWarning(`a body parse thread failed: ${error.message}`));
    }
    return workers.run(task, { transferList: task.segments }).then(
      (parsed: ParsedBody) => revivedTexts(parsed),
      (error: Error) => {
        // GitLab's answer to a malformed string, as for a short one (plugins/malformed-strings.ts).
        throw error?.message === MALFORMED_STRING ? new Failure('bad_request_malformed') : error;
      },
    );
  };
  const parseInWorker =
    (format: ParseTask['format']): ParseInWorker =>
    (body) =>
      run({ format, segments: body.segments(), length: body.length });
  app.decorate('parseYaml', (text: string) => {
    const bytes = Buffer.from(text);
    const segment = new ArrayBuffer(bytes.length);
    new Uint8Array(segment).set(bytes);
    return run({ format: 'yaml', segments: [segment], length: bytes.length });
  });
  app.addHook('onClose', async () => workers?.destroy());
  app.addContentTypeParser(JSON_TYPE, (req, payload, done) => {
    readJson(req, payload, maxBodyBytes, parseInWorker('json')).then(
      (v) => done(null, v),
      (e) => done(e as Error, undefined),
    );
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', (req, payload, done) => {
    readForm(req, payload, maxBodyBytes, parseInWorker('form')).then(
      (v) => done(null, v),
      (e) => done(e as Error, undefined),
    );
  });
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    parseMultipart(req, payload, maxBodyBytes).then(
      (v) => done(null, v),
      (e) => done(e as Error, undefined),
    );
  });
  // Anything else (text/plain, no content type with a body, ...) is read and ignored, as Grape does.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, _body, done) => done(null, {}));
}

/** What a body is checked by as it arrives: a chunk or its end may throw the refusal. */
interface BodyCheck {
  write(chunk: Buffer): void;
  end(): void;
}

/**
 * A body's bytes as they arrive. A small one is kept as its chunks, joined when read. Once it is larger than
 * a parse on the event loop may take, its bytes are copied into segments of memory of its own, a chunk at a
 * time as it comes, to be handed to the worker thread without a copy: joining 40 MB at the end took the
 * event loop 130-190 ms (the fresh memory's first touch), spread over the chunks it is a fraction of each.
 * A body of a declared length has one segment that long (untouched pages take no memory), so that the worker
 * need not join them into a second copy; a chunked one has segments of SEGMENT_BYTES.
 */
class BodyBytes {
  length = 0;
  private chunks: Buffer[] = [];
  private readonly copied: Buffer[] = [];
  /** Bytes copied into `copied`. */
  private filled = 0;
  private readonly segmentBytes: number;

  /** `declared`: the body's declared length, or null. */
  constructor(declared: number | null) {
    this.segmentBytes = declared && declared > PARSE_IN_WORKER_BYTES ? declared : SEGMENT_BYTES;
  }

  add(chunk: Buffer): void {
    this.length += chunk.length;
    if (!this.copied.length && this.length <= PARSE_IN_WORKER_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    for (const pending of this.chunks) this.copy(pending);
    this.chunks = [];
    this.copy(chunk);
  }

  /** Whether it is parsed in the worker thread. */
  get large(): boolean {
    return this.copied.length > 0;
  }

  /** A small body's text. */
  text(): string {
    return Buffer.concat(this.chunks, this.length).toString('utf8');
  }

  /** A large body's segments, in order, the last one filled up to the body's length. */
  segments(): ArrayBuffer[] {
    return this.copied.map((segment) => segment.buffer as ArrayBuffer);
  }

  private copy(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      const offset = this.filled % this.segmentBytes;
      // Memory of its own (never a slice of a shared pool), so that it can be handed to a worker thread.
      if (offset === 0) this.copied.push(Buffer.allocUnsafeSlow(this.segmentBytes));
      const n = Math.min(chunk.length - at, this.segmentBytes - offset);
      this.copied[this.copied.length - 1].set(chunk.subarray(at, at + n), offset);
      at += n;
      this.filled += n;
    }
  }
}

const SEGMENT_BYTES = 1024 * 1024;

/**
 * Reads a whole body (BodyBytes), checked chunk by chunk as it arrives: a body over the size limit or refused
 * by `check` is answered at once, without reading the rest.
 */
function readBody(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
  check: BodyCheck | null,
): Promise<BodyBytes> {
  return new Promise((resolve, reject) => {
    // A declared length alone holds no memory: bytes are kept as they come.
    const body = new BodyBytes(declaredLength(req));
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      payload.removeListener('data', onData);
      payload.pause();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      if (body.length + chunk.length > maxBodyBytes) return fail(answerBeforeBody(req, payloadTooLarge()));
      try {
        check?.write(chunk);
      } catch (e) {
        return fail(e instanceof Failure ? answerBeforeBody(req, e) : (e as Error));
      }
      body.add(chunk);
    };
    payload.on('data', onData);
    payload.on('error', (e) => fail(e instanceof Failure ? e : invalidParams(MALFORMED_BODY)));
    payload.on('end', () => {
      if (settled) return;
      try {
        check?.end();
      } catch (e) {
        return fail(e as Error);
      }
      settled = true;
      resolve(body);
    });
  });
}

/**
 * Reads a JSON body, holding it to GitLab's limits chunk by chunk as it arrives (http/json-limits.ts): a body
 * over a limit, or one that stops being JSON, is answered at once, without reading the rest.
 */
async function readJson(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
  parseInWorker: ParseInWorker,
): Promise<unknown> {
  const scanner = new JsonLimitScanner();
  const body = await readBody(req, payload, maxBodyBytes, scanner);
  if (scanner.empty) return {};
  if (!body.large) {
    try {
      return JSON.parse(body.text().trim());
    } catch {
      throw invalidParams(MALFORMED_BODY);
    }
  }
  // The scan found one JSON document; JSON.parse may still refuse a control character in a string.
  return parseInWorker(body).catch((error: Error) => {
    // JSON.parse's refusal is the client's; anything else (the worker failed) is the server's.
    throw error?.name === 'SyntaxError' ? invalidParams(MALFORMED_BODY) : error;
  });
}

/** Reads a form body (Rack's nested keys); a large one is parsed in the worker thread. */
async function readForm(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
  parseInWorker: ParseInWorker,
): Promise<unknown> {
  const body = await readBody(req, payload, maxBodyBytes, null);
  return body.large ? parseInWorker(body) : parseRackQuery(body.text());
}

/** A part this size or smaller is a string; a larger one Utf8Text, never made a string on the event loop. */
const SMALL_PART_BYTES = 64 * 1024;

/**
 * Memory for a multipart body's large file parts, reserved once, as long as the body's declared length
 * (untouched pages take none). Each part over SMALL_PART_BYTES is copied into it a chunk at a time as it comes,
 * after the one before, so that it ends in one piece: joining 40 MiB at the end held the event loop over
 * 200 ms. The parts are within the body, so they fit. A part that grows large while another is still being
 * copied, or a body of no declared length (chunked), keeps its chunks and joins them at its end.
 */
class PartMemory {
  private memory: Buffer | null = null;
  /** Where the next part may start; null while a part is being copied in. */
  private free: number | null = 0;

  constructor(private readonly capacity: number | null) {}

  /** The memory left, for one part; null when there is none to give now. */
  claim(): Buffer | null {
    if (this.capacity === null || this.free === null) return null;
    this.memory ??= Buffer.allocUnsafeSlow(this.capacity);
    const rest = this.memory.subarray(this.free);
    this.free = null;
    return rest;
  }

  /** The part given `claimed` ended, `used` bytes long. */
  release(claimed: Buffer, used: number): void {
    this.free = claimed.byteOffset + used;
  }
}

/** A multipart file part's bytes as they come (PartMemory). */
class PartBytes {
  private chunks: Buffer[] = [];
  private claimed: Buffer | null = null;
  private length = 0;

  constructor(private readonly memory: PartMemory) {}

  add(chunk: Buffer): void {
    if (this.claimed) {
      if (this.length + chunk.length > this.claimed.length) throw new Error('a part is longer than its body');
      this.length += chunk.copy(this.claimed, this.length);
      return;
    }
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length > SMALL_PART_BYTES) {
      this.claimed = this.memory.claim();
      if (!this.claimed) return;
      Buffer.concat(this.chunks, this.length).copy(this.claimed);
      this.chunks = [];
    }
  }

  /** A file part is read as text, as Rack does: invalid UTF-8 becomes U+FFFD, as a decoder makes it. */
  text(): string | Utf8Text {
    let bytes: Buffer;
    if (this.claimed) {
      bytes = this.claimed.subarray(0, this.length);
      this.memory.release(this.claimed, this.length);
    } else bytes = Buffer.concat(this.chunks, this.length);
    if (bytes.length <= SMALL_PART_BYTES) return bytes.toString('utf8');
    return new Utf8Text(isUtf8(bytes) ? bytes : Buffer.from(bytes.toString('utf8')));
  }
}

/**
 * Reads every part of a multipart body. Any way the body can go wrong (a part cut off, no closing
 * boundary, a part or field over the size limit, the client hanging up) rejects exactly once, so the
 * request is answered and no stream is left with an `error` nobody listens to.
 */
function parseMultipart(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // In the body's order: a file part's value is known at its end, after the fields that follow it may have
    // come (Rack's `files[][…]` groups keys by that order).
    const parts: { name: string; value: string | Utf8Text }[] = [];
    // A multipart body always has some length; none declared is a chunked one.
    const memory = new PartMemory(declaredLength(req) || null);
    let received = 0;
    let settled = false;
    let openFiles = 0;
    let parserFinished = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      reject(e);
      payload.unpipe(parser);
    };
    const finishIfDone = () => {
      if (settled || !parserFinished || openFiles > 0) return;
      settled = true;
      const params: Record<string, unknown> = Object.create(null);
      for (const { name, value } of parts) addParam(params, name, value);
      resolve(params);
    };
    let parser: BusboyInstance;
    try {
      parser = new Busboy({
        headers: req.headers as { 'content-type': string },
        // Every part read as a file part is, its bytes as they come (PartBytes): a field is made a string whole
        // by the parser, 0.3-0.6 s for 150 MB on the event loop.
        isPartAFile: () => true,
        limits: { fileSize: maxBodyBytes, files: MAX_PARAMS },
      });
    } catch {
      return reject(invalidParams(MALFORMED_BODY));
    }
    parser.on('file', (name: string, stream: NodeJS.ReadableStream) => {
      const part = parts.length < MAX_PARAMS ? { name, value: '' as string | Utf8Text } : null;
      if (part) parts.push(part);
      openFiles++;
      // A part past MAX_PARAMS is read to its end and not kept: like a field past it, it is no parameter.
      const bytes = part && new PartBytes(memory);
      stream.on('data', (c: Buffer) => {
        try {
          bytes?.add(c);
        } catch (error) {
          fail(error as Error);
        }
      });
      stream.on('limit', () => fail(payloadTooLarge()));
      stream.on('error', () => fail(invalidParams(MALFORMED_BODY)));
      stream.on('end', () => {
        openFiles--;
        if (part) part.value = bytes!.text();
        finishIfDone();
      });
    });
    parser.on('error', () => fail(invalidParams(MALFORMED_BODY)));
    parser.on('finish', () => {
      parserFinished = true;
      finishIfDone();
    });
    payload.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // The rest of the body keeps flowing into this listener until the 413 is sent and the
      // connection closed (see plugins/errors.ts).
      if (received > maxBodyBytes) fail(payloadTooLarge());
    });
    // A body refused while it streams in (plugins/body-limits.ts) keeps its own answer.
    payload.on('error', (e) => fail(e instanceof Failure ? e : invalidParams(MALFORMED_BODY)));
    payload.pipe(parser);
  });
}

// Request bodies as GitLab accepts them: JSON, application/x-www-form-urlencoded with Rack's nested
// keys, and multipart/form-data (parts in order, file parts read as text). An empty body with a JSON
// content type (common on DELETE) is an empty hash. How large a body may be, and for whom, is decided
// before any of it is read (plugins/body-limits.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { Piscina } from 'piscina';
import { addParam, MAX_PARAMS, parseRackQuery } from '../rack-params.ts';
import { JsonLimitScanner } from '../json-limits.ts';
import { Failure, invalidParams, payloadTooLarge } from '../../domain/failure.ts';
import { shippedFile } from '../../shipped-files.ts';
import type { ParseTask } from '../body-parse-worker.ts';
import { answerBeforeBody, MALFORMED_BODY } from './errors.ts';

/**
 * A JSON or form body up to this size is parsed on the event loop (about 3 ms); a larger one in a worker
 * thread, since parsing takes time in proportion to the body: over 100 ms for a 50 MiB snippet.
 */
const PARSE_IN_WORKER_BYTES = 1024 * 1024;

type ParseInWorker = (bytes: ArrayBuffer, length: number) => Promise<unknown>;

export function registerBodyParsers(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  let workers: Piscina | null = null;
  const parseInWorker =
    (format: ParseTask['format']): ParseInWorker =>
    (bytes, length) => {
      // One thread: large bodies are rare, and each parse holds about three times its body in memory.
      // From source the worker is body-parse-worker.ts (run through tsx, as its parent is); built, .js.
      const worker = import.meta.url.endsWith('.ts') ? 'body-parse-worker.ts' : 'body-parse-worker.js';
      if (!workers) {
        workers = new Piscina({ filename: shippedFile('http', worker), maxThreads: 1 });
        // A thread failing outside a task must not end the server (an 'error' event nobody hears would).
        workers.on('error', (error: Error) => process.emitWarning(`a body parse thread failed: ${error.message}`));
      }
      const task: ParseTask = { format, bytes, length };
      return workers.run(task, { transferList: [bytes] });
    };
  app.addHook('onClose', async () => workers?.destroy());
  app.addContentTypeParser(/^application\/(.+\+)?json/, (req, payload, done) => {
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
 * Reads a whole body into memory of its own (so that it can be handed to a worker thread without a copy),
 * checked chunk by chunk as it arrives: a body over the size limit or refused by `check` is answered at once,
 * without reading the rest.
 */
function readBody(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
  check: BodyCheck | null,
): Promise<{ body: Buffer; length: number }> {
  return new Promise((resolve, reject) => {
    // The chunks as they come, joined once at the end: a declared length alone holds no memory, and no byte
    // is copied twice (growing one buffer by doubling copied a 60 MB body three times, 200 ms).
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      payload.removeListener('data', onData);
      payload.pause();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      if (length + chunk.length > maxBodyBytes) return fail(answerBeforeBody(req, payloadTooLarge()));
      try {
        check?.write(chunk);
      } catch (e) {
        return fail(e instanceof Failure ? answerBeforeBody(req, e) : (e as Error));
      }
      chunks.push(chunk);
      length += chunk.length;
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
      // Memory of its own (never a slice of a shared pool), so that it can be handed to a worker thread.
      const body = Buffer.allocUnsafeSlow(length);
      let at = 0;
      for (const chunk of chunks) {
        body.set(chunk, at);
        at += chunk.length;
      }
      resolve({ body, length });
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
  const { body, length } = await readBody(req, payload, maxBodyBytes, scanner);
  if (scanner.empty) return {};
  if (length <= PARSE_IN_WORKER_BYTES) {
    try {
      return JSON.parse(body.toString('utf8', 0, length).trim());
    } catch {
      throw invalidParams(MALFORMED_BODY);
    }
  }
  // The scan found one JSON document; JSON.parse may still refuse a control character in a string.
  return parseInWorker(body.buffer as ArrayBuffer, length).catch((error: Error) => {
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
  const { body, length } = await readBody(req, payload, maxBodyBytes, null);
  if (length <= PARSE_IN_WORKER_BYTES) return parseRackQuery(body.toString('utf8', 0, length));
  return parseInWorker(body.buffer as ArrayBuffer, length);
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
    const params: Record<string, unknown> = Object.create(null);
    let count = 0;
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
      resolve(params);
    };
    let parser: BusboyInstance;
    try {
      parser = new Busboy({
        headers: req.headers as { 'content-type': string },
        limits: { fieldSize: maxBodyBytes, fileSize: maxBodyBytes, fields: MAX_PARAMS, files: MAX_PARAMS },
      });
    } catch {
      return reject(invalidParams(MALFORMED_BODY));
    }
    parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) return fail(payloadTooLarge());
      if (++count <= MAX_PARAMS) addParam(params, name, value);
    });
    parser.on('file', (name: string, stream: NodeJS.ReadableStream) => {
      const chunks: Buffer[] = [];
      openFiles++;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(payloadTooLarge()));
      stream.on('error', () => fail(invalidParams(MALFORMED_BODY)));
      stream.on('end', () => {
        openFiles--;
        if (++count <= MAX_PARAMS) addParam(params, name, Buffer.concat(chunks).toString('utf8'));
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

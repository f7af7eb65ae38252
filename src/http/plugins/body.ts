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
import { answerBeforeBody, MALFORMED_BODY } from './errors.ts';

/**
 * A JSON body up to this size is parsed on the event loop (about 3 ms); a larger one in a worker thread,
 * since JSON.parse takes time in proportion to the body: over 100 ms for a 50 MiB snippet.
 */
const PARSE_IN_WORKER_BYTES = 1024 * 1024;

export function registerBodyParsers(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  let workers: Piscina | null = null;
  const parseInWorker = (bytes: ArrayBuffer, length: number): Promise<unknown> => {
    // One thread: large bodies are rare, and each parse holds about three times its body in memory.
    workers ??= new Piscina({ filename: shippedFile('http', 'json-parse-worker.mjs'), maxThreads: 1 });
    return workers.run({ bytes, length }, { transferList: [bytes] });
  };
  app.addHook('onClose', async () => workers?.destroy());
  app.addContentTypeParser(/^application\/(.+\+)?json/, (req, payload, done) => {
    readJson(req, payload, maxBodyBytes, parseInWorker).then(
      (v) => done(null, v),
      (e) => done(e as Error, undefined),
    );
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: maxBodyBytes },
    (_req, body, done) => {
      done(null, parseRackQuery(body as string));
    },
  );
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    parseMultipart(req, payload, maxBodyBytes).then(
      (v) => done(null, v),
      (e) => done(e as Error, undefined),
    );
  });
  // Anything else (text/plain, no content type with a body, ...) is read and ignored, as Grape does.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, _body, done) => done(null, {}));
}

/**
 * Reads a JSON body, holding it to GitLab's limits chunk by chunk as it arrives (http/json-limits.ts): a body
 * over a limit, or one that stops being JSON, is answered at once, without reading the rest.
 */
function readJson(
  req: FastifyRequest,
  payload: NodeJS.ReadableStream,
  maxBodyBytes: number,
  parseInWorker: (bytes: ArrayBuffer, length: number) => Promise<unknown>,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const scanner = new JsonLimitScanner();
    // Room grows as the body comes (doubling, up to its declared length), so a declared length alone holds
    // no memory.
    const declared = Number(req.headers['content-length']) || Number.POSITIVE_INFINITY;
    let body = Buffer.allocUnsafeSlow(Math.min(declared, 64 * 1024));
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
        scanner.write(chunk);
      } catch (e) {
        return fail(e instanceof Failure ? answerBeforeBody(req, e) : (e as Error));
      }
      if (length + chunk.length > body.length) {
        const grown = Buffer.allocUnsafeSlow(Math.min(declared, Math.max(body.length * 2, length + chunk.length)));
        body.copy(grown, 0, 0, length);
        body = grown;
      }
      chunk.copy(body, length);
      length += chunk.length;
    };
    payload.on('data', onData);
    payload.on('error', (e) => fail(e instanceof Failure ? e : invalidParams(MALFORMED_BODY)));
    payload.on('end', () => {
      if (settled) return;
      try {
        scanner.end();
      } catch (e) {
        return fail(e as Error);
      }
      settled = true;
      if (scanner.empty) return resolve({});
      if (length <= PARSE_IN_WORKER_BYTES) {
        try {
          return resolve(JSON.parse(body.toString('utf8', 0, length).trim()));
        } catch {
          return reject(invalidParams(MALFORMED_BODY));
        }
      }
      // The scan found one JSON document; JSON.parse may still refuse a control character in a string.
      parseInWorker(body.buffer as ArrayBuffer, length).then(resolve, () => reject(invalidParams(MALFORMED_BODY)));
    });
  });
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

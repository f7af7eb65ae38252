// Request bodies as GitLab accepts them: JSON, application/x-www-form-urlencoded with Rack's nested
// keys, and multipart/form-data (parts in order, file parts read as text). An empty body with a JSON
// content type (common on DELETE) is an empty hash.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { addParam, MAX_PARAMS, parseRackQuery } from '../rack-params.ts';
import { invalidParams, payloadTooLarge } from '../../domain/failure.ts';
import { MALFORMED_BODY } from './errors.ts';

export function registerBodyParsers(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^application\/(.+\+)?json/,
    { parseAs: 'string', bodyLimit: maxBodyBytes },
    (_req, body, done) => {
      const text = (body as string).trim();
      if (text === '') return done(null, {});
      try {
        done(null, JSON.parse(text));
      } catch {
        done(invalidParams(MALFORMED_BODY), undefined);
      }
    },
  );
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
    payload.on('error', () => fail(invalidParams(MALFORMED_BODY)));
    payload.pipe(parser);
  });
}

// Parsing large request bodies, in a worker thread (http/plugins/body.ts): JSON.parse of a 50 MiB body takes
// over 100 ms and Rack's form parsing of 100 MiB over 500 ms, which on the main thread would hold every
// other request that long. Run through tsx from src/; built as http/body-parse-worker.js (scripts/build.mjs).
import { parseRackQuery } from './rack-params.ts';

export interface ParseTask {
  format: 'json' | 'form';
  /** The body's bytes in order; the last segment is filled up to `length`. */
  segments: ArrayBuffer[];
  length: number;
}

export default function parseBody({ format, segments, length }: ParseTask): unknown {
  const text = Buffer.concat(
    segments.map((segment) => Buffer.from(segment)),
    length,
  ).toString('utf8');
  return format === 'json' ? JSON.parse(text.trim()) : parseRackQuery(text);
}

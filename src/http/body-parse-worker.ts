// Parsing large request bodies, in a worker thread (http/plugins/body.ts): JSON.parse of a 50 MiB body takes
// over 100 ms and Rack's form parsing of 100 MiB over 500 ms, which on the main thread would hold every
// other request that long. Run through tsx from src/; built as http/body-parse-worker.js (scripts/build.mjs).
import { parseRackQuery } from './rack-params.ts';

export interface ParseTask {
  format: 'json' | 'form';
  bytes: ArrayBuffer;
  length: number;
}

export default function parseBody({ format, bytes, length }: ParseTask): unknown {
  const text = Buffer.from(bytes, 0, length).toString('utf8');
  return format === 'json' ? JSON.parse(text.trim()) : parseRackQuery(text);
}

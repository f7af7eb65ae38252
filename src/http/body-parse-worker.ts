// Parsing large request bodies, in a worker thread (http/plugins/body.ts): JSON.parse of a 50 MiB body takes
// over 100 ms and Rack's form parsing of 100 MiB over 500 ms, which on the main thread would hold every
// other request that long. Run through tsx from src/; built as http/body-parse-worker.js (scripts/build.mjs).
//
// What comes back must not cost the main thread in proportion to the body either: a string sent back is made
// again there, about half a second for 150 MiB of strings on this project's machine, in one piece or in
// thousands. So the long strings come back as their UTF-8 bytes (transferred, not copied), and the main thread
// sees them as Utf8Text (domain/utf8.ts): a file's content goes to its blob as those bytes, never a string.
import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { isWellFormed, MALFORMED_STRING, Utf8Text } from '../domain/utf8.ts';
import { parseRackFormBytes } from './rack-params.ts';
import { parseYamlOrJson } from '../domain/seed-text.ts';

export interface ParseTask {
  format: 'json' | 'form' | 'yaml';
  /** The body's bytes in order; the last segment is filled up to `length`. */
  segments: ArrayBuffer[];
  length: number;
}

/**
 * A parsed body as it crosses back: its long strings replaced by `${marker}o<n>` (own[n]) or
 * `${marker}p<n>` (packed, from ends[n - 1] or 0 to ends[n]).
 */
export interface ParsedBody {
  value: unknown;
  marker: string;
  own: Uint8Array[];
  packed: Uint8Array;
  ends: number[];
}

/** A string this long or longer comes back as bytes in memory of its own (a file's content, say). */
const OWN_BYTES_CHARS = 64 * 1024;
/** A string this short always stays a string: names, tokens, titles, flags. */
const SHORT_CHARS = 128;
/**
 * Characters of the strings between the two that stay strings, the first met; the others are packed as
 * bytes into one buffer. About 4 ms to make again; 100,000 short strings (GitLab's most elements) 50 ms.
 */
const KEPT_CHARS = 1 << 20;
/**
 * A key longer than this is dropped with its value: no parameter has so long a name, and 50,000 long keys
 * would be made again on the main thread as the strings are.
 */
const MAX_KEY_CHARS = 128;

export default function parseBody(task: ParseTask): unknown {
  const parsed = packTexts(parse(task));
  return move({
    get [transferableSymbol]() {
      return [...parsed.own.map((bytes) => bytes.buffer), parsed.packed.buffer];
    },
    get [valueSymbol]() {
      return parsed;
    },
  });
}

/**
 * The body parsed. Each of its forms is as large as the body (its bytes, joined, its text), so each is let go
 * as soon as the next is made.
 */
function parse(task: ParseTask): unknown {
  // A form is never made one string: its names and values are cut out of the bytes and decoded there, and a long
  // value stays bytes (the body's text and its decoded copies took about twelve times a 63 MB body).
  if (task.format === 'form') return parseRackFormBytes(bodyBytes(task), OWN_BYTES_CHARS, ownBytes);
  const text = bodyBytes(task).toString('utf8');
  return task.format === 'yaml' ? parseYamlOrJson(text) : JSON.parse(text.trim());
}

/** The body's bytes in one piece: its one segment as it came (a body of a declared length), or the segments joined. */
function bodyBytes(task: ParseTask): Buffer {
  if (task.segments.length === 1) return Buffer.from(task.segments[0], 0, task.length);
  const joined = Buffer.concat(
    task.segments.map((segment) => Buffer.from(segment)),
    task.length,
  );
  task.segments.length = 0;
  return joined;
}

/**
 * A form's long value, decoded into memory of its own, as it comes back: its bytes, invalid UTF-8 replaced by
 * U+FFFD as reading it as text would (a stretch at a time, never the whole value a string).
 */
function ownBytes(bytes: Buffer): Uint8Array {
  if (isUtf8(bytes)) return bytes;
  const decoder = new StringDecoder('utf8');
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 1 << 20)
    pieces.push(Buffer.from(decoder.write(bytes.subarray(at, at + (1 << 20)))));
  pieces.push(Buffer.from(decoder.end()));
  const whole = Buffer.allocUnsafeSlow(pieces.reduce((n, piece) => n + piece.length, 0));
  let at = 0;
  for (const piece of pieces) at += piece.copy(whole, at);
  return whole;
}

type Container = Record<string, unknown> | unknown[];

/** A container of parameters; a form's long value (its bytes, a Uint8Array) is none. */
const isContainer = (value: unknown): value is Container =>
  typeof value === 'object' && value !== null && !(value instanceof Uint8Array);

/** Sets an own property: a key such as `__proto__` (JSON.parse makes it an own one) is set too, not its setter. */
const put = (container: Container, key: string | number, value: unknown) =>
  Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });

/** Every key and value of every container in `root`, the containers visited in the body's order. */
function* entries(root: Container): Generator<[Container, string | number, unknown]> {
  const stack: Container[] = [root];
  while (stack.length) {
    const container = stack.pop()!;
    const keys = Array.isArray(container) ? container.keys() : Object.keys(container);
    const children: Container[] = [];
    for (const key of keys) {
      const value = (container as Record<string | number, unknown>)[key];
      yield [container, key, value];
      if (isContainer(value)) children.push(value);
    }
    stack.push(...children.reverse());
  }
}

function packTexts(value: unknown): ParsedBody {
  const marker = `\u0000${crypto.randomBytes(8).toString('hex')}:`;
  const own: Uint8Array[] = [];
  const toPack: string[] = [];
  let kept = 0;
  const replacement = (text: string): string | null => {
    if (text.length <= SHORT_CHARS) return null;
    // Half of a UTF-16 pair is no text: refused here, where the whole string is (the main thread refuses a short
    // one, plugins/malformed-strings.ts); as bytes it became U+FFFD.
    if (!isWellFormed(text)) throw new Error(MALFORMED_STRING);
    if (text.length < OWN_BYTES_CHARS && kept + text.length <= KEPT_CHARS) {
      kept += text.length;
      return null;
    }
    if (text.length < OWN_BYTES_CHARS) return `${marker}p${toPack.push(text) - 1}`;
    // Memory of its own, exactly its size (never a slice of a shared pool), so that it can be transferred.
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    bytes.write(text);
    return `${marker}o${own.push(bytes) - 1}`;
  };
  const root = { value };
  for (const [container, key, item] of entries(root)) {
    if (typeof key === 'string' && key.length > MAX_KEY_CHARS) {
      delete (container as Record<string, unknown>)[key];
      continue;
    }
    // A form's long value, already bytes of its own (parse): it comes back as they are.
    const replaced =
      item instanceof Uint8Array
        ? `${marker}o${own.push(item) - 1}`
        : typeof item === 'string'
          ? replacement(item)
          : null;
    if (replaced !== null) put(container, key, replaced);
  }
  const packed = Buffer.allocUnsafeSlow(toPack.reduce((n, text) => n + Buffer.byteLength(text), 0));
  const ends: number[] = [];
  let at = 0;
  for (const text of toPack) {
    at += packed.write(text, at);
    ends.push(at);
  }
  return { value: root.value, marker, own, packed, ends };
}

/** On the main thread: the body with its long strings as Utf8Text, each a view of the memory that came across. */
export function revivedTexts(parsed: ParsedBody): unknown {
  const { marker } = parsed;
  const bytesOf = (n: number, own: boolean) => {
    if (own) {
      const bytes = parsed.own[n];
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    }
    const start = n === 0 ? 0 : parsed.ends[n - 1];
    return Buffer.from(parsed.packed.buffer, parsed.packed.byteOffset + start, parsed.ends[n] - start);
  };
  const revived = (text: string) =>
    new Utf8Text(bytesOf(Number(text.slice(marker.length + 1)), text[marker.length] === 'o'));
  const root = { value: parsed.value };
  for (const [container, key, item] of entries(root)) {
    if (typeof item === 'string' && item.startsWith(marker)) put(container, key, revived(item));
  }
  return root.value;
}

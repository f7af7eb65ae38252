// Rack's nested parameter syntax, which GitLab clients rely on for form bodies and query strings:
// `a[]=1&a[]=2` is an array, `a[b]=1` a hash, and `files[][file_path]=x&files[][content]=y` an array of
// hashes where a new element starts whenever a key the current element already has appears again.

import { isWellFormed } from '../domain/utf8.ts';

const MAX_DEPTH = 32;
export const MAX_PARAMS = 10_000;

type Params = Record<string, unknown>;

function hasNestedKey(hash: Params, key: string): boolean {
  const parts = key.split(/[[\]]+/).filter(Boolean);
  let cur: unknown = hash;
  for (const part of parts) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !(part in (cur as Params))) return false;
    cur = (cur as Params)[part];
  }
  return true;
}

const PLAIN_NAME = /^[^[\]]+$/;

/**
 * A Rack hash: a nested parameter object (a plain object), never an array, nor a value such as a long text kept as
 * bytes (Utf8Text) or a stream.
 */
export const isHash = (v: unknown): v is Params =>
  typeof v === 'object' &&
  v !== null &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/** Adds one `name=value` pair to `params` following Rack's normalize_params. */
export function addParam(params: Params, name: string, value: unknown, depth = 0): Params {
  if (depth > MAX_DEPTH) return params;
  if (PLAIN_NAME.test(name)) {
    // The common case, `per_page=20`: no brackets to follow.
    if (name !== '__proto__' && name !== 'constructor' && name !== 'prototype') params[name] = value;
    return params;
  }
  const match = /^[[\]]*([^[\]]+)\]*/.exec(name);
  if (!match) return params;
  const key = match[1];
  const after = name.slice(match[0].length);
  if (key === '__proto__' || key === 'constructor' || key === 'prototype') return params;
  const child = after.startsWith('[]') ? listItemKey(after) : undefined;
  if (after === '') {
    params[key] = value;
  } else if (after === '[]') {
    if (!Array.isArray(params[key])) params[key] = [];
    (params[key] as unknown[]).push(value);
  } else if (child !== undefined) {
    if (!Array.isArray(params[key])) params[key] = [];
    const list = params[key] as unknown[];
    const last = list[list.length - 1];
    if (isHash(last) && !hasNestedKey(last, child)) addParam(last, child, value, depth + 1);
    else list.push(addParam(Object.create(null), child, value, depth + 1));
  } else {
    if (!isHash(params[key])) params[key] = Object.create(null);
    addParam(params[key] as Params, after, value, depth + 1);
  }
  return params;
}

/**
 * The key in a list item's name after `[]` (`[][file_path]` or `[]file_path`), as Rack's patterns
 * `^\[\]\[([^\[\]]+)\]$` and `^\[\](.+)$` find it at the start, in Ruby, where `.` and `$` stop at a "\n":
 * `[]\n` names none (a hash, then). A match Ruby would find at a later line's start is not looked for.
 */
function listItemKey(after: string): string | undefined {
  return (/^\[\]\[([^[\]]+)\](?=\n|$)/.exec(after) ?? /^\[\]([^\n]+)/.exec(after))?.[1];
}

const ENCODED = /[%+]/;

/** One name or value of a query or form, decoded as Rack decodes it (`+` is a space; a bad escape stays). */
export function decode(s: string): string {
  if (!ENCODED.test(s)) return s;
  // Through its bytes (decodeBytes): `replace(/\+/g, ' ')` took 164 ms for 1 MB of `a+`, and gigabytes for more.
  if (isWellFormed(s)) return decodeBytes(Buffer.from(s)).toString('utf8');
  const plus = s.replaceAll('+', ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) HEX['0123456789abcdef'.charCodeAt(i)] = HEX['0123456789ABCDEF'.charCodeAt(i)] = i;

/**
 * `raw` decoded as decode() decodes its text: `+` a space, and each `%XX` its byte, unless some `%` is not followed
 * by two hex digits or the escapes do not make whole UTF-8 characters (what decodeURIComponent refuses), when
 * only the `+` are decoded. Raw bytes stay as they are (the caller reads the result as UTF-8, as it would have
 * read `raw`). A result other than `raw` itself is memory of its own, exactly its length's ArrayBuffer when `own`.
 */
export function decodeBytes(raw: Buffer, own = false): Buffer {
  if (raw.indexOf(0x25) === -1 && raw.indexOf(0x2b) === -1) return own ? copyOwn(raw) : raw;
  const out = own ? Buffer.allocUnsafeSlow(raw.length) : Buffer.allocUnsafe(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; ) {
    const c = raw[i];
    if (c === 0x2b) {
      out[n++] = 0x20;
      i++;
    } else if (c !== 0x25) {
      out[n++] = c;
      i++;
    } else {
      const taken = escapedCharacter(raw, i, out, n);
      if (taken === 0) return plusDecoded(raw, out);
      n += taken / 3;
      i += taken;
    }
  }
  return out.subarray(0, n);
}

/** The escape byte at `i` (`%XX`), or -1. */
const escapedByte = (raw: Buffer, i: number) =>
  i + 2 < raw.length && raw[i] === 0x25 && HEX[raw[i + 1]] >= 0 && HEX[raw[i + 2]] >= 0
    ? HEX[raw[i + 1]] * 16 + HEX[raw[i + 2]]
    : -1;

/**
 * Copies the UTF-8 character escaped at `raw[i]` (one to four `%XX`) into `out` at `n`; answers how many bytes of
 * `raw` it took, or 0 when they are no whole, valid character (decodeURIComponent's URIError).
 */
function escapedCharacter(raw: Buffer, i: number, out: Buffer, n: number): number {
  const lead = escapedByte(raw, i);
  if (lead < 0) return 0;
  out[n] = lead;
  if (lead < 0x80) return 3;
  const more =
    lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : -1;
  if (more < 0) return 0;
  for (let k = 1; k <= more; k++) {
    const b = escapedByte(raw, i + 3 * k);
    if (b < 0x80 || b > 0xbf) return 0;
    // No overlong form, no surrogate, nothing past U+10FFFF.
    if (
      k === 1 &&
      ((lead === 0xe0 && b < 0xa0) ||
        (lead === 0xed && b > 0x9f) ||
        (lead === 0xf0 && b < 0x90) ||
        (lead === 0xf4 && b > 0x8f))
    )
      return 0;
    out[n + k] = b;
  }
  return 3 * (more + 1);
}

/** `raw` with only its `+` made spaces, into `out` (as long as `raw`). */
function plusDecoded(raw: Buffer, out: Buffer): Buffer {
  raw.copy(out);
  for (let i = out.indexOf(0x2b); i !== -1; i = out.indexOf(0x2b, i + 1)) out[i] = 0x20;
  return out.subarray(0, raw.length);
}

function copyOwn(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * A form body parsed from its bytes, as parseRackQuery parses its text, without ever making the whole body a
 * string: each name and value is cut out and decoded as bytes (decodeBytes). A value whose decoded bytes are
 * `longBytes` or more is `long(bytes)` (memory of its own), never a string; the others are strings.
 */
export function parseRackFormBytes(body: Buffer, longBytes: number, long: (bytes: Buffer) => unknown): Params {
  const params: Params = Object.create(null);
  let count = 0;
  for (let start = 0; start <= body.length; ) {
    let end = body.indexOf(0x26, start);
    if (end === -1) end = body.length;
    // Within the pair only: a search past its end would read the rest of the body again for every pair.
    const pair = body.subarray(start, end);
    start = end + 1;
    if (!pair.length) continue;
    if (++count > MAX_PARAMS) break;
    const eq = pair.indexOf(0x3d);
    const name = decodeBytes(eq === -1 ? pair : pair.subarray(0, eq)).toString('utf8');
    let value: unknown = '';
    if (eq !== -1) {
      const raw = pair.subarray(eq + 1);
      const bytes = decodeBytes(raw, raw.length >= longBytes);
      value = bytes.length >= longBytes ? long(bytes) : bytes.toString('utf8');
    }
    addParam(params, name, value);
  }
  return params;
}

/** Parses `a=1&b[]=2` into nested params. */
export function parseRackQuery(query: string): Params {
  const params: Params = Object.create(null);
  if (!query) return params;
  let count = 0;
  // Pair by pair, not split('&') whole: the parameters past MAX_PARAMS are ignored, so they are never cut
  // out either (40 MB of `x[]=1&` would be 6.6 million strings).
  for (let start = 0; start <= query.length; ) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    const pair = query.slice(start, end);
    start = end + 1;
    if (!pair) continue;
    if (++count > MAX_PARAMS) break;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    addParam(params, name, value);
  }
  return params;
}

// Rack's nested parameter syntax, which GitLab clients rely on for form bodies and query strings:
// `a[]=1&a[]=2` is an array, `a[b]=1` a hash, and `files[][file_path]=x&files[][content]=y` an array of
// hashes where a new element starts whenever a key the current element already has appears again.

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
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
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

// Path safety for namespace and project paths (GitLab's path format), one place for the rule.
import { trimOf } from '../text-scan.ts';

const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
const FORBIDDEN_ENDINGS = ['.git', '.atom'];
/** Top-level names that would collide with our own routes (API, git over HTTP, web paths). */
const RESERVED_TOP_LEVEL = new Set([
  '-',
  'api',
  'admin',
  'assets',
  'dashboard',
  'explore',
  'groups',
  'help',
  'projects',
  'public',
  'search',
  'snippets',
  'uploads',
  'users',
  'v2',
]);

export const PATH_FORMAT_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";

/** Null when `path` is an acceptable namespace/project path, else GitLab's validation message. */
export function pathError(path: string, topLevel: boolean): string | null {
  if (path.length === 0) return "can't be blank";
  if (path.length > 255) return 'is too long (maximum is 255 characters)';
  if (!PATH_FORMAT.test(path) || FORBIDDEN_ENDINGS.some((e) => path.toLowerCase().endsWith(e)) || path.endsWith('.')) {
    return PATH_FORMAT_MESSAGE;
  }
  if (topLevel && RESERVED_TOP_LEVEL.has(path.toLowerCase())) return `${path} is a reserved name`;
  return null;
}

/** A full path (`group/sub/project`) every segment of which has GitLab's path format. */
export function isWellFormedFullPath(fullPath: string): boolean {
  return fullPath.split('/').every((segment) => PATH_FORMAT.test(segment));
}

/**
 * How much of a name, past its leading spaces, pathFromName reads: enough for a path over 255 characters, which is
 * refused, however many characters of the name the path drops.
 */
const NAME_CHARS_READ = 4096;

/** A path derived from a display name, as GitLab does when only `name` is given. */
export function pathFromName(name: string): string {
  return trimOf(
    name
      .trimStart()
      // A name is at most 255 characters: the path of a longer one is refused as well from its start, and making
      // it from 16 MB held the event loop a second.
      .slice(0, NAME_CHARS_READ)
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-'),
    '-.',
  );
}

// ---- File paths inside repositories (snippet files, template names) ----

function decodeOnce(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * GitLab's file_path validator (lib/api/validations/validators/file_path.rb + Gitlab::PathTraversal):
 * after one more URL-decoding (so %2e%2e%2f is caught), no traversal, no absolute path, no newline or NUL.
 */
export function isSafeFilePath(value: string): boolean {
  for (const p of [value, decodeOnce(value)]) {
    if (p === '.' || p === '..') return false;
    if (/^\.\.[/\\]|[/\\]\.\.$|[/\\]\.\.[/\\]/.test(p)) return false;
    if (p.startsWith('/') || p.startsWith('\\') || /^[a-zA-Z]:[/\\]/.test(p)) return false;
    if (/[\n\r\0]/.test(p)) return false;
  }
  return true;
}

/**
 * What git itself refuses as a path in a tree: empty, '.', '..' or '.git' segments, a trailing '/', or a NUL (which
 * ends a name in a tree: written, it made a tree no reader can take apart).
 */
export function isValidGitPath(value: string): boolean {
  if (value === '' || value.length > 4096 || value.includes('\u0000')) return false;
  return value.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..' && seg.toLowerCase() !== '.git');
}

/** True when one path is a file and also a directory of another ("a" and "a/b"): no git tree can hold both. */
export function hasFileDirectoryClash(paths: Iterable<string>): boolean {
  // The paths as a tree of their parts, built in one pass: work that grows with the paths' length, not its
  // square (a path may be 4,096 characters of 2,048 directories).
  const root: PathNode = new Map();
  for (const path of paths) {
    const parts = path.split('/');
    let node = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = node.get(parts[i]) ?? new Map();
      if (next === FILE) return true;
      node.set(parts[i], next);
      node = next;
    }
    const last = node.get(parts[parts.length - 1]);
    if (last !== undefined && last !== FILE) return true;
    node.set(parts[parts.length - 1], FILE);
  }
  return false;
}

const FILE = Symbol('file');
type PathNode = Map<string, PathNode | typeof FILE>;

// ---- Refs ----

/** A full ref name (`refs/heads/x`) git accepts: git check-ref-format's rules. */
export function isValidRefName(ref: string): boolean {
  return (
    ref.startsWith('refs/') &&
    !ref.endsWith('.') &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: git refuses control characters in ref names.
    !/(\.\.|@\{|[\s~^:?*[\\\x00-\x1f\x7f])/.test(ref) &&
    ref.split('/').every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'))
  );
}

/** The longest branch name snippetd takes, in characters. */
export const MAX_BRANCH_NAME = 255;

/**
 * Branch (and tag) names the API takes: valid in a ref, at most 255 characters, not to be read as options, and, as
 * GitLab's GitRefValidator, neither `HEAD` nor a name starting `refs/heads/` or `refs/remotes/` (which would read as
 * another ref: `refs/heads/HEAD` beside HEAD, `refs/heads/refs/heads/x` beside `x`).
 */
export function isValidBranchName(name: string): boolean {
  return (
    name.length <= MAX_BRANCH_NAME &&
    !name.startsWith('-') &&
    name !== '@' &&
    name !== 'HEAD' &&
    !name.startsWith('refs/heads/') &&
    !name.startsWith('refs/remotes/') &&
    isValidRefName(`refs/heads/${name}`)
  );
}

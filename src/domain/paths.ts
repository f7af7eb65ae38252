// Path safety for namespace and project paths (GitLab's path format), one place for the rule.
const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
const FORBIDDEN_ENDINGS = ['.git', '.atom'];
/** Top-level names that would collide with our own routes (API, git over HTTP, web paths). */
const RESERVED_TOP_LEVEL = new Set(['-', 'api', 'admin', 'assets', 'dashboard', 'explore', 'groups', 'help', 'projects', 'public', 'search', 'snippets', 'uploads', 'users', 'v2']);

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

/** A path derived from a display name, as GitLab does when only `name` is given. */
export function pathFromName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+/, '')
    .replace(/[-.]+$/, '');
}

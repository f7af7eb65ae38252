// Snippet file actions (create, update, delete, move) applied to the current files, with GitLab's two
// kinds of failure: an action that is malformed on its own (422 "Snippet actions have invalid data",
// SnippetInputAction validations) and one that does not fit the repository (400 "Repository Error ...").
import { hasFileDirectoryClash, isValidGitPath } from '../paths.ts';
import { type Text, Utf8Text } from '../utf8.ts';

export type ActionName = 'create' | 'update' | 'delete' | 'move';

export interface FileAction {
  action: ActionName;
  file_path?: string | null;
  previous_path?: string | null;
  /** As a request sends it, or already as bytes (a create converts each file once). */
  content?: Text | Buffer | null;
}

export type RepoError = 'conflict' | 'invalid_name' | 'too_many_files' | 'no_files';

export class FileActionError extends Error {
  constructor(readonly kind: RepoError) {
    super(kind);
  }
}

const present = (v: string | null | undefined): v is string => typeof v === 'string' && v.trim() !== '';
const hasContent = (v: Text | Buffer | null | undefined) =>
  Buffer.isBuffer(v) ? v.length > 0 : v instanceof Utf8Text ? !v.isBlank() : present(v);

/** GitLab's SnippetInputAction validations: each action must be well formed on its own. */
export function isValidAction(a: FileAction): boolean {
  switch (a.action) {
    case 'create':
      return hasContent(a.content);
    case 'update':
      return (
        present(a.file_path) && hasContent(a.content) && (!present(a.previous_path) || a.previous_path === a.file_path)
      );
    case 'delete':
      return present(a.file_path);
    case 'move':
      return present(a.previous_path) && a.file_path !== a.previous_path;
  }
}

const GENERATED = /^snippetfile(\d+)\.txt$/;

/** Whether a path is one GitLab gives an unnamed file: snippetfile<N>.txt. */
export const isGeneratedName = (path: string) => GENERATED.test(path);

/**
 * The N of the files named snippetfile<N>.txt, as files come and go: GitLab names an unnamed file one above the
 * highest in use. Kept in a max-heap whose numbers no longer in use are dropped as they surface, so that each
 * name costs a few steps (looking at every file at each unnamed create took 3.8 s for 9,990 of them).
 */
class GeneratedNames {
  private readonly inUse = new Map<number, number>();
  private readonly heap: number[] = [];

  constructor(paths: Iterable<string>) {
    for (const path of paths) this.add(path);
  }

  add(path: string): string {
    const n = numberOf(path);
    if (n === null) return path;
    this.inUse.set(n, (this.inUse.get(n) ?? 0) + 1);
    this.heap.push(n);
    for (let at = this.heap.length - 1; at > 0; ) {
      const up = (at - 1) >> 1;
      if (this.heap[up] >= this.heap[at]) break;
      [this.heap[up], this.heap[at]] = [this.heap[at], this.heap[up]];
      at = up;
    }
    return path;
  }

  remove(path: string): void {
    const n = numberOf(path);
    if (n === null) return;
    const left = (this.inUse.get(n) ?? 1) - 1;
    if (left) this.inUse.set(n, left);
    else this.inUse.delete(n);
  }

  /** The next name: one above the highest N in use. */
  next(): string {
    while (this.heap.length && !this.inUse.has(this.heap[0])) this.pop();
    return this.add(`snippetfile${(this.heap[0] ?? 0) + 1}.txt`);
  }

  private pop(): void {
    const last = this.heap.pop()!;
    if (!this.heap.length) return;
    this.heap[0] = last;
    for (let at = 0; ; ) {
      const [left, right] = [2 * at + 1, 2 * at + 2];
      let top = at;
      if (left < this.heap.length && this.heap[left] > this.heap[top]) top = left;
      if (right < this.heap.length && this.heap[right] > this.heap[top]) top = right;
      if (top === at) return;
      [this.heap[top], this.heap[at]] = [this.heap[at], this.heap[top]];
      at = top;
    }
  }
}

const numberOf = (path: string) => {
  const m = GENERATED.exec(path);
  return m ? Number(m[1]) : null;
};

/**
 * Applies actions in order to a copy of `current` (path -> content) and returns the new files. `modes` (path ->
 * mode, for the files that are not plain ones) is changed in place to follow them: a file keeps its mode when
 * updated or moved, as GitLab's commits of file actions keep it.
 * Throws FileActionError for what git would refuse; call isValidAction on every action first.
 */
export function applyActions(
  current: Map<string, Buffer>,
  actions: FileAction[],
  maxFiles: number,
  modes: Map<string, string> = new Map(),
): Map<string, Buffer> {
  const files = new Map(current);
  const generated = new GeneratedNames(files.keys());
  // Files past what the deletions still to come can bring under maxFiles make too many whatever follows: said
  // at once.
  let deletionsLeft = actions.filter((a) => a.action === 'delete').length;
  const requireName = (path: string) => {
    if (!isValidGitPath(path)) throw new FileActionError('invalid_name');
    return path;
  };
  for (const a of actions) {
    const content = Buffer.isBuffer(a.content)
      ? a.content
      : a.content instanceof Utf8Text
        ? a.content.bytes
        : typeof a.content === 'string'
          ? Buffer.from(a.content)
          : null;
    switch (a.action) {
      case 'create': {
        const path = present(a.file_path) ? requireName(a.file_path) : generated.next();
        if (files.has(path)) throw new FileActionError('conflict');
        if (present(a.file_path)) generated.add(path);
        files.set(path, content!);
        if (files.size > maxFiles + deletionsLeft) throw new FileActionError('too_many_files');
        break;
      }
      case 'update': {
        if (!files.has(a.file_path!)) throw new FileActionError('conflict');
        files.set(a.file_path!, content!);
        break;
      }
      case 'delete': {
        deletionsLeft--;
        if (!files.delete(a.file_path!)) throw new FileActionError('conflict');
        generated.remove(a.file_path!);
        modes.delete(a.file_path!);
        break;
      }
      case 'move': {
        const from = a.previous_path!;
        const old = files.get(from);
        if (old === undefined) throw new FileActionError('conflict');
        files.delete(from);
        generated.remove(from);
        const named = present(a.file_path) || GENERATED.test(from);
        const to = present(a.file_path) ? requireName(a.file_path) : GENERATED.test(from) ? from : generated.next();
        if (files.has(to)) throw new FileActionError('conflict');
        if (named) generated.add(to);
        files.set(to, content ?? old);
        const mode = modes.get(from);
        modes.delete(from);
        if (mode) modes.set(to, mode);
        break;
      }
    }
  }
  if (hasFileDirectoryClash(files.keys())) throw new FileActionError('conflict');
  if (files.size > maxFiles) throw new FileActionError('too_many_files');
  // As a push is refused: a snippet without files has nothing to answer its raw URL with.
  if (files.size === 0) throw new FileActionError('no_files');
  return files;
}

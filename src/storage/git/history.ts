// A repository's history and the changes of one commit, as git itself works them out (rename detection,
// binary files, line counts) in a node's serving cache (serving-cache.ts). Reads elsewhere never spawn
// git; these do, because a diff with its renames is git's own algorithm, and one process answers a whole
// page. The process is bounded: its output is read up to a limit, and it is killed past its time.
import { spawn } from 'node:child_process';

/** How one file changed, as git's raw status letters say (copies are shown as additions). */
export type ChangeKind = 'added' | 'modified' | 'deleted' | 'renamed' | 'type_changed';

export interface FileChange {
  kind: ChangeKind;
  /** The path before the commit (the same as `path` unless renamed). */
  oldPath: string;
  path: string;
  oldMode: string;
  newMode: string;
  /** Lines added and deleted; null for a binary file. */
  added: number | null;
  deleted: number | null;
  /** Git's similarity of a renamed file, in per cent. */
  similarity: number | null;
}

export interface Revision {
  id: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** ISO 8601 in UTC. */
  authoredAt: string;
  message: string;
  files: FileChange[];
}

export interface FilePatch extends FileChange {
  /**
   * The file's patch from its first hunk header (`@@`) on, or null: `binary` (git says the files differ),
   * `too_large` (over the per-file limit), `not_shown` (past the whole diff's limits), `empty` (a mode change
   * or a rename without changes).
   */
  hunks: string | null;
  omitted: 'binary' | 'too_large' | 'not_shown' | 'empty' | null;
}

/** What reading git's output is bounded by. */
export interface DiffLimits {
  /** A file's patch beyond this is "too large" (GitLab's diff_max_patch_bytes default). */
  filePatchBytes: number;
  /** Patches shown in all; past this the rest of the files are listed, not shown. */
  totalPatchBytes: number;
  /** Changed lines shown in all (GitLab's diff_max_lines default). */
  totalLines: number;
  /** Files in one diff (GitLab's diff_max_files default); past this git's output is not read. */
  files: number;
}

export class GitTimeout extends Error {}

interface GitOutput {
  stdout: Buffer;
  /** Whether reading stopped at the byte limit (git was killed then). */
  cut: boolean;
}

export const GIT_ENV = {
  PATH: process.env.PATH,
  // No user or system configuration: an external diff driver, textconv or colour would change the output.
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
  LC_ALL: 'C',
};

/**
 * Runs git in `dir` and reads its output up to `maxBytes` (then kills it: what was read is answered, `cut`).
 * `onChunk` may stop reading early by answering false. GitTimeout when git is not done within `timeoutMs`.
 */
function runGit(
  dir: string,
  args: string[],
  maxBytes: number,
  timeoutMs: number,
  onChunk?: (chunk: Buffer) => boolean,
  okExits: readonly number[] = [0],
): Promise<GitOutput> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', dir, ...args], { env: GIT_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    // First: git that cannot start (no file descriptor left) has no pipes, and an error event nobody hears
    // stops the process.
    let timer: NodeJS.Timeout | undefined;
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    if (!child.stdout || !child.stderr) return;
    const chunks: Buffer[] = [];
    let bytes = 0;
    let cut = false;
    let stderr = '';
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new GitTimeout(`git ${args[0]} took over ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      const room = maxBytes - bytes;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      bytes += kept.length;
      if (kept.length < chunk.length || (onChunk && !onChunk(kept))) {
        cut = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // Past its time whichever came first: a process held up (a busy machine) hears git's end before its timer.
      if (performance.now() - started > timeoutMs)
        return reject(new GitTimeout(`git ${args[0]} took over ${timeoutMs} ms`));
      if (!okExits.includes(code ?? -1) && !cut) reject(new Error(`git ${args[0]} failed (${code}): ${stderr.trim()}`));
      else resolve({ stdout: Buffer.concat(chunks), cut });
    });
  });
}

/** Reads git's NUL-separated output field by field. */
class Fields {
  at = 0;
  constructor(private readonly buf: Buffer) {}

  get done() {
    return this.at >= this.buf.length;
  }

  peek(): number {
    return this.buf[this.at];
  }

  /** The bytes up to the next NUL (which is passed); null when there is no NUL left. */
  next(): string | null {
    const end = this.buf.indexOf(0, this.at);
    if (end === -1) return null;
    const text = this.buf.toString('utf8', this.at, end);
    this.at = end + 1;
    return text;
  }

  skip(byte: number) {
    if (this.buf[this.at] === byte) this.at++;
  }
}

const KIND: Record<string, ChangeKind> = {
  A: 'added',
  C: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  T: 'type_changed',
};

/**
 * The file entries of `--raw --numstat -z` for one commit or diff: raw lines (`:mode mode id id status`,
 * paths) then as many numstat lines (`added<TAB>deleted<TAB>path`, or for a rename an empty path then the
 * two). Null when the output ends inside them.
 */
function parseFileEntries(f: Fields): FileChange[] | null {
  const files: FileChange[] = [];
  while (!f.done && f.peek() === 0x3a /* : */) {
    const raw = f.next();
    if (raw === null) return null;
    const [oldMode, newMode, , , status] = raw.slice(1).split(' ');
    const letter = status[0];
    const oldPath = f.next();
    if (oldPath === null) return null;
    const path = letter === 'R' || letter === 'C' ? f.next() : oldPath;
    if (path === null) return null;
    files.push({
      kind: KIND[letter] ?? 'modified',
      oldPath: letter === 'C' ? path : oldPath,
      path,
      oldMode,
      newMode,
      added: null,
      deleted: null,
      similarity: letter === 'R' ? Number(status.slice(1)) : null,
    });
  }
  for (const file of files) {
    const stat = f.next();
    if (stat === null) return null;
    const [added, deleted, path] = stat.split('\t');
    // A rename's numstat names its two paths in the fields that follow.
    if (path === '' && (f.next() === null || f.next() === null)) return null;
    if (added !== '-') file.added = Number(added);
    if (deleted !== '-') file.deleted = Number(deleted);
  }
  return files;
}

/** The least time the commits of a page alone are given (readRevisions). */
const BARE_LOG_MS = 5000;

const FORMAT = '%x1e%H%x00%P%x00%an%x00%ae%x00%at%x00%B';
const COMMIT_ID = /^[0-9a-f]{40}$/;

/**
 * Commits reachable from `commit`, newest first (git log's order), `skip` of them passed over, at most
 * `limit`, each with the files it changed against its first parent (renames found). When that is more than
 * `maxBytes` of output or takes over `timeoutMs`, the commits are answered without their files (`files`
 * empty, `filesOmitted` true).
 */
export async function readRevisions(
  dir: string,
  commit: string,
  opts: { skip: number; limit: number; maxBytes: number; timeoutMs: number },
): Promise<{ revisions: Revision[]; filesOmitted: boolean }> {
  const common = [`--skip=${opts.skip}`, `--max-count=${opts.limit}`, commit, '--'];
  const withFiles = await runGit(
    dir,
    [
      'log',
      '-z',
      `--format=${FORMAT}`,
      '--raw',
      '--numstat',
      '-M',
      '--diff-merges=first-parent',
      '--no-ext-diff',
      '--no-textconv',
      ...common,
    ],
    opts.maxBytes,
    opts.timeoutMs,
  ).catch((error) => {
    if (error instanceof GitTimeout) return null;
    throw error;
  });
  const parsed = withFiles && !withFiles.cut && parseLog(withFiles.stdout, true);
  if (parsed) return { revisions: parsed, filesOmitted: false };
  // Too much to read, or to work out in time, with every file: the commits alone.
  // The commits alone cost git next to nothing, whatever they changed: they are given at least a few seconds.
  const bare = await runGit(
    dir,
    ['log', '-z', `--format=${FORMAT}`, ...common],
    opts.maxBytes,
    Math.max(opts.timeoutMs, BARE_LOG_MS),
  );
  const revisions = parseLog(bare.stdout, false);
  if (!revisions) throw new Error('git log answered what could not be read');
  return { revisions, filesOmitted: true };
}

function parseLog(buf: Buffer, withFiles: boolean): Revision[] | null {
  const f = new Fields(buf);
  const revisions: Revision[] = [];
  while (!f.done) {
    if (f.peek() !== 0x1e) return null;
    f.at++;
    const id = f.next();
    const parents = f.next();
    const authorName = f.next();
    const authorEmail = f.next();
    const time = f.next();
    const message = f.next();
    if (message === null || !COMMIT_ID.test(id!)) return null;
    let files: FileChange[] = [];
    if (withFiles) {
      f.skip(0x0a);
      const entries = parseFileEntries(f);
      if (!entries) return null;
      files = entries;
    }
    revisions.push({
      id: id!,
      parents: parents ? parents.split(' ') : [],
      authorName: authorName!,
      authorEmail: authorEmail!,
      authoredAt: new Date(Number(time) * 1000).toISOString(),
      message,
      files,
    });
  }
  return revisions;
}

/** git's empty tree: what a diff from nothing starts at (git knows it without having it). */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * The changes of `commit` against `parent` (null: a root commit, against nothing; EMPTY_TREE: any commit, against
 * nothing), every file with its patch
 * within `limits`. Git's output is read once, each file's patch dropped as soon as it passes its limit.
 */
export async function readCommitDiff(
  dir: string,
  parent: string | null,
  commit: string,
  limits: DiffLimits,
  timeoutMs: number,
): Promise<{ files: FilePatch[]; cut: boolean }> {
  const args = [
    'diff-tree',
    '-r',
    '-z',
    '-M',
    '--raw',
    '--numstat',
    '--patch',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-commit-id',
    ...(parent ? [parent, commit] : ['--root', commit]),
    '--',
  ];
  const reader = new PatchReader(limits);
  const { cut } = await runGit(dir, args, Number.MAX_SAFE_INTEGER, timeoutMs, (chunk) => reader.take(chunk));
  return reader.finish(cut);
}

/**
 * The best common ancestor of the first commit and the others (git merge-base: of the first and a merge of the
 * others); null when their histories share none.
 */
export async function mergeBase(dir: string, commits: readonly string[], timeoutMs: number): Promise<string | null> {
  // Exit 1 without output: no common ancestor.
  const { stdout } = await runGit(dir, ['merge-base', ...commits], 1024, timeoutMs, undefined, [0, 1]);
  const id = stdout.toString('latin1').trim();
  return COMMIT_ID.test(id) ? id : null;
}

/**
 * The commits `head` reaches and `base` does not (git rev-list base..head), oldest first; past `limit`, only the
 * newest `limit` of them, and `cut`.
 */
export async function commitsBetween(
  dir: string,
  base: string,
  head: string,
  limit: number,
  timeoutMs: number,
): Promise<{ ids: string[]; cut: boolean }> {
  const { stdout } = await runGit(
    dir,
    ['rev-list', `--max-count=${limit + 1}`, `${base}..${head}`, '--'],
    41 * (limit + 1),
    timeoutMs,
  );
  const ids = stdout
    .toString('latin1')
    .split('\n')
    .filter((id) => COMMIT_ID.test(id));
  return { ids: ids.slice(0, limit).reverse(), cut: ids.length > limit };
}

/**
 * One page of the commits `from` reaches (several: each of them), in git's --topo-order (no parent before its
 * children, lines of history not intermixed), with git log's own filters: `since`/`until` on the committer's time,
 * `author` a text the author's `name <email>` holds, `path` with git's history simplification, `firstParent`.
 */
export async function topoOrderPage(
  dir: string,
  from: readonly string[],
  opts: {
    skip: number;
    limit: number;
    since?: string;
    until?: string;
    author?: string;
    path?: string;
    firstParent?: boolean;
  },
  timeoutMs: number,
): Promise<string[]> {
  const args = [
    'rev-list',
    '--topo-order',
    `--skip=${opts.skip}`,
    `--max-count=${opts.limit}`,
    ...(opts.firstParent ? ['--first-parent'] : []),
    ...(opts.since ? [`--since=${opts.since}`] : []),
    ...(opts.until ? [`--until=${opts.until}`] : []),
    ...(opts.author ? ['--fixed-strings', `--author=${opts.author}`] : []),
    ...from,
    '--',
    ...(opts.path ? [opts.path] : []),
  ];
  const { stdout } = await runGit(dir, args, 41 * opts.limit, timeoutMs);
  return stdout
    .toString('latin1')
    .split('\n')
    .filter((id) => COMMIT_ID.test(id));
}

/**
 * Every branch by its commit's committer time (git for-each-ref --sort=committerdate, ties by name as git's), newest
 * first with `newestFirst`: git reads the commits, not this process.
 */
export async function branchesByCommitTime(
  dir: string,
  newestFirst: boolean,
  timeoutMs: number,
): Promise<{ name: string; id: string }[]> {
  const { stdout } = await runGit(
    dir,
    [
      'for-each-ref',
      `--sort=${newestFirst ? '-' : ''}committerdate`,
      '--format=%(objectname) %(refname)',
      'refs/heads/',
    ],
    Number.MAX_SAFE_INTEGER,
    timeoutMs,
  );
  return stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 41)
    .map((line) => ({ id: line.slice(0, 40), name: line.slice(41 + 'refs/heads/'.length) }));
}

/**
 * Which of `branches` point at a commit `root` reaches, as git's `for-each-ref --merged` tells (each name given
 * whole: git refuses `*`, `?` and `[` in ref names, and a name's path below it is filtered out here).
 */
export async function branchesMergedInto(
  dir: string,
  root: string,
  branches: string[],
  timeoutMs: number,
): Promise<Set<string>> {
  if (!branches.length) return new Set();
  const refs = branches.map((name) => `refs/heads/${name}`);
  const { stdout } = await runGit(
    dir,
    ['for-each-ref', `--merged=${root}`, '--format=%(refname)', '--', ...refs],
    1024 * 1024,
    timeoutMs,
  );
  const asked = new Set(refs);
  const merged = stdout
    .toString('utf8')
    .split('\n')
    .filter((ref) => asked.has(ref));
  return new Set(merged.map((ref) => ref.slice('refs/heads/'.length)));
}

const DIFF_HEADER = Buffer.from('diff --git ');
const NUL_PAIR = Buffer.from([0, 0]);

/** Bytes of file entries read before the patches at most: past it, the change is too large to list. */
const MAX_ENTRY_BYTES = 8 * 1024 * 1024;

interface PatchText {
  text: Buffer[];
  bytes: number;
  tooLarge: boolean;
}

/**
 * Splits diff-tree's output as it streams: the file entries first (NUL-separated, then one more NUL), then
 * one patch a file in the same order, each starting at a line `diff --git `. A patch's other lines start
 * with a space, `+`, `-`, `\` or `@`, so such a line can only be the next file's header. Keeps at most the
 * limits' bytes.
 */
class PatchReader {
  /** What came before the patches so far, in chunks: joined only when it may be whole (`take`). */
  private head: Buffer[] = [];
  private headBytes = 0;
  private files: FileChange[] | null = null;
  private readonly patches: PatchText[] = [];
  private pending = Buffer.alloc(0);
  private bytesShown = 0;
  private linesShown = 0;
  /** Whether the diff went over its limits: files from patches.length on are not shown. */
  private full = false;

  constructor(private readonly limits: DiffLimits) {}

  /** Takes a chunk of git's output; false once nothing more is wanted. */
  take(chunk: Buffer): boolean {
    if (this.files) return this.lines(chunk);
    const before = this.head.at(-1);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    // The entries end with an empty field, two NULs in a row (no entry has an empty field): they are parsed
    // only once such a pair has come. Parsing all that had come at every chunk took time in its square.
    const pair = chunk.includes(NUL_PAIR) || (before?.at(-1) === 0 && chunk[0] === 0);
    if (!pair) return this.headBytes <= MAX_ENTRY_BYTES;
    const head = Buffer.concat(this.head);
    this.head = [head];
    const f = new Fields(head);
    const files = parseFileEntries(f);
    // Until the NUL after the entries has come, more entries may follow.
    if (!files || f.done) return this.headBytes <= MAX_ENTRY_BYTES;
    this.files = files;
    f.skip(0);
    this.head = [];
    return this.lines(head.subarray(f.at));
  }

  private lines(chunk: Buffer): boolean {
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let start = 0;
    for (let end = buf.indexOf(0x0a); end !== -1; end = buf.indexOf(0x0a, start)) {
      if (!this.line(buf.subarray(start, end + 1))) return false;
      start = end + 1;
    }
    let rest = buf.subarray(start);
    // A line longer than a file's limit makes its file too large: what is held of it stays bounded.
    if (rest.length > this.limits.filePatchBytes) {
      const current = this.patches.at(-1);
      if (current && !current.tooLarge) this.drop(current);
      rest = Buffer.alloc(0);
    }
    this.pending = Buffer.from(rest);
    return true;
  }

  private drop(patch: PatchText) {
    this.bytesShown -= patch.bytes;
    patch.tooLarge = true;
    patch.text = [];
    patch.bytes = 0;
  }

  private line(line: Buffer): boolean {
    if (line.subarray(0, DIFF_HEADER.length).equals(DIFF_HEADER)) {
      if (this.patches.length >= Math.min(this.files!.length, this.limits.files)) {
        this.full = true;
        return false;
      }
      this.patches.push({ text: [], bytes: 0, tooLarge: false });
      return true;
    }
    const current = this.patches.at(-1);
    // Header lines (index, mode, rename, ---/+++) before the first hunk are not kept.
    if (!current || current.tooLarge || (!current.text.length && line[0] !== 0x40) /* @ */) return true;
    if (current.bytes + line.length > this.limits.filePatchBytes) {
      this.drop(current);
      return true;
    }
    const counted = line[0] !== 0x40;
    if (
      this.bytesShown + line.length > this.limits.totalPatchBytes ||
      (counted && this.linesShown >= this.limits.totalLines)
    ) {
      this.drop(current);
      this.patches.pop();
      this.full = true;
      return false;
    }
    current.text.push(Buffer.from(line));
    current.bytes += line.length;
    this.bytesShown += line.length;
    if (counted) this.linesShown++;
    return true;
  }

  finish(cut: boolean): { files: FilePatch[]; cut: boolean } {
    if (!this.files) {
      // Git's output ended within the entries (no patch followed), or they were too many to read.
      const files = parseFileEntries(new Fields(Buffer.concat(this.head)));
      if (!files) return { files: [], cut: true };
      this.files = files;
    }
    if (this.pending.length && !this.full) this.line(this.pending);
    const files = this.files.slice(0, this.limits.files).map((file, i): FilePatch => {
      const patch = this.patches[i];
      if (!patch) return { ...file, hunks: null, omitted: 'not_shown' };
      if (patch.tooLarge) return { ...file, hunks: null, omitted: 'too_large' };
      if (file.added === null) return { ...file, hunks: null, omitted: 'binary' };
      if (!patch.text.length) return { ...file, hunks: null, omitted: 'empty' };
      return { ...file, hunks: Buffer.concat(patch.text).toString('utf8'), omitted: null };
    });
    return { files, cut: cut || this.full || this.files.length > this.limits.files };
  }
}

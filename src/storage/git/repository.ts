// Bare repositories on disk: created without spawning git, refs moved by compare-and-swap under git's
// own lock-file protocol (refs/heads/<b>.lock), and read at any revision through the git CLI (reads at
// arbitrary refs are not on the hot path: the current version is mirrored in the database).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fsyncDir } from './objects.ts';

const run = promisify(execFile);

export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  id: string;
  size: number;
  path: string;
}

export interface CommitInfo {
  id: string;
  authorName: string;
  authorEmail: string;
  authoredAt: string;
  committerName: string;
  committerEmail: string;
  committedAt: string;
  parents: string[];
  message: string;
}

export class RefConflict extends Error {
  constructor(readonly ref: string) {
    super(`${ref} moved while it was being updated`);
  }
}

/** A ref lock is held for a few milliseconds; one older than this was left by a process that died. */
const STALE_LOCK_MS = 2_000;

function removeStaleLock(lock: string): void {
  try {
    if (Date.now() - fs.statSync(lock).mtimeMs > STALE_LOCK_MS) fs.rmSync(lock, { force: true });
  } catch {
    // no lock
  }
}

export class GitRepository {
  constructor(readonly dir: string) {}

  exists(): boolean {
    return fs.existsSync(path.join(this.dir, 'HEAD'));
  }

  /**
   * Lays out an empty bare repository whose HEAD names `branch`, the way `git init --bare` does. Nothing
   * is fsynced here: call syncLayout() once the first commit is written, when the journal already holds
   * these entries and the directory fsyncs cost next to nothing.
   */
  init(branch: string): void {
    if (fs.existsSync(this.dir)) fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(this.dir), { recursive: true });
    // Plain mkdir calls, parents first: this runs on every snippet create.
    for (const sub of ['', 'objects', 'objects/info', 'objects/pack', 'refs', 'refs/heads', 'refs/tags'])
      fs.mkdirSync(path.join(this.dir, sub));
    fs.writeFileSync(path.join(this.dir, 'HEAD'), `ref: refs/heads/${branch}\n`);
    fs.writeFileSync(
      path.join(this.dir, 'config'),
      '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n',
    );
  }

  /** Makes the directory entries of a new repository durable (its files were fsynced as written). */
  syncLayout(): void {
    for (const file of ['HEAD', 'config']) {
      const fd = fs.openSync(path.join(this.dir, file), 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    for (const sub of ['objects', 'refs', '']) fsyncDir(path.join(this.dir, sub));
    fsyncDir(path.dirname(this.dir));
  }

  /** Renames this repository's directory to `target`'s, replacing whatever was there. */
  moveTo(target: GitRepository): void {
    if (fs.existsSync(target.dir)) fs.rmSync(target.dir, { recursive: true, force: true });
    fs.renameSync(this.dir, target.dir);
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The commit a branch points at (loose ref, else packed-refs), or null. */
  readBranch(branch: string): string | null {
    try {
      return fs.readFileSync(path.join(this.dir, 'refs/heads', branch), 'utf8').trim();
    } catch {
      const packed = this.packedRefs().get(`refs/heads/${branch}`);
      return packed ?? null;
    }
  }

  private packedRefs(): Map<string, string> {
    const refs = new Map<string, string>();
    try {
      for (const line of fs.readFileSync(path.join(this.dir, 'packed-refs'), 'utf8').split('\n')) {
        const m = /^([0-9a-f]{40}) (\S+)$/.exec(line);
        if (m) refs.set(m[2], m[1]);
      }
    } catch {
      // no packed refs
    }
    return refs;
  }

  /**
   * Moves `branch` from `expected` (null = must not exist) to `next`, atomically and durably. Two writers
   * racing on one branch: one takes the lock and wins, the other gets RefConflict and nothing is lost.
   */
  updateBranch(branch: string, expected: string | null, next: string): void {
    const refFile = path.join(this.dir, 'refs/heads', branch);
    const lock = `${refFile}.lock`;
    fs.mkdirSync(path.dirname(refFile), { recursive: true });
    removeStaleLock(lock);
    let fd: number;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch {
      throw new RefConflict(`refs/heads/${branch}`);
    }
    try {
      if (this.readBranch(branch) !== expected) throw new RefConflict(`refs/heads/${branch}`);
      fs.writeSync(fd, `${next}\n`);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fs.renameSync(lock, refFile);
      fsyncDir(path.dirname(refFile));
    } catch (error) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed
      }
      fs.rmSync(lock, { force: true });
      throw error;
    }
  }

  private async git(args: string[], encoding: 'utf8' | 'buffer' = 'utf8', input?: string): Promise<string | Buffer> {
    const promise = run('git', ['--git-dir', this.dir, ...args], { encoding, maxBuffer: 1 << 30 });
    if (input !== undefined) promise.child.stdin?.end(`${input}\n`);
    const { stdout } = await promise;
    return stdout;
  }

  /** Resolves a branch, tag, full or abbreviated SHA, or HEAD to a commit id; null when it names none. */
  async resolveCommit(ref: string): Promise<string | null> {
    if (ref.startsWith('-') || /[\0\n\\]|\.\.|@\{|[~^:?*[]/.test(ref)) return null;
    try {
      return (
        (await this.git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])) as string
      ).trim();
    } catch {
      return null;
    }
  }

  /** The bytes of `filePath` in `commit`, or null when there is no such file. */
  async readFile(commit: string, filePath: string): Promise<Buffer | null> {
    let blob: string;
    let size: number;
    try {
      blob = (
        (await this.git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}:${filePath}`])) as string
      ).trim();
      const [type, bytes] = (
        (await this.git(['cat-file', '--batch-check=%(objecttype) %(objectsize)'], 'utf8', blob)) as string
      )
        .trim()
        .split(' ');
      if (type !== 'blob') return null;
      size = Number(bytes);
    } catch {
      return null;
    }
    return this.readBlobInto(blob, Buffer.allocUnsafe(size));
  }

  /** Streams a blob into a buffer of its exact size, so a large file is held in memory once. */
  private readBlobInto(blob: string, target: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', ['--git-dir', this.dir, 'cat-file', 'blob', blob], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let at = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        at += chunk.copy(target, at);
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 && at === target.length ? resolve(target) : reject(new Error(`git cat-file ${blob} exited ${code}`)),
      );
    });
  }

  /** Every blob in a commit's tree (recursive), with mode, id and size, in git's order. */
  async listTree(
    commit: string,
    opts: { path?: string; recursive?: boolean; trees?: boolean } = {},
  ): Promise<TreeEntry[]> {
    const args = [
      'ls-tree',
      '-l',
      '-z',
      ...(opts.recursive === false ? [] : ['-r']),
      ...(opts.trees ? ['-t'] : []),
      '--end-of-options',
      commit,
    ];
    if (opts.path) args.push('--', opts.path.endsWith('/') ? opts.path : `${opts.path}/`);
    const out = (await this.git(args)) as string;
    return out
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf('\t');
        const [mode, type, id, size] = line.slice(0, tab).split(/\s+/);
        return {
          mode,
          type: type as TreeEntry['type'],
          id,
          size: size === '-' ? 0 : Number(size),
          path: line.slice(tab + 1),
        };
      });
  }

  /** Reads many blobs through one `git cat-file --batch` process. */
  async readBlobs(ids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    if (!ids.length) return out;
    const data = (await this.git(['cat-file', '--batch'], 'buffer', ids.join('\n'))) as Buffer;
    let at = 0;
    while (at < data.length) {
      const nl = data.indexOf(10, at);
      const [id, , size] = data.subarray(at, nl).toString('latin1').split(' ');
      const length = Number(size);
      out.set(id, data.subarray(nl + 1, nl + 1 + length));
      at = nl + 1 + length + 1;
    }
    return out;
  }

  /** Commits reachable from `ref`, newest first. */
  async log(ref: string, opts: { skip: number; limit: number; path?: string }): Promise<CommitInfo[]> {
    const format = '%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%P%x00%B%x00%x01';
    const args = [
      'log',
      `--format=${format}`,
      `--skip=${opts.skip}`,
      `--max-count=${opts.limit}`,
      '--end-of-options',
      ref,
    ];
    if (opts.path) args.push('--', opts.path);
    const out = (await this.git(args)) as string;
    return out
      .split('\x01')
      .map((chunk) => chunk.replace(/^\n/, ''))
      .filter(Boolean)
      .map((chunk) => {
        const [id, authorName, authorEmail, authoredAt, committerName, committerEmail, committedAt, parents, message] =
          chunk.split('\0');
        return {
          id,
          authorName,
          authorEmail,
          authoredAt,
          committerName,
          committerEmail,
          committedAt,
          parents: parents.split(' ').filter(Boolean),
          message,
        };
      });
  }

  async countCommits(ref: string, path?: string): Promise<number> {
    const args = ['rev-list', '--count', '--end-of-options', ref, ...(path ? ['--', path] : [])];
    return Number(((await this.git(args)) as string).trim());
  }

  /** The branches of the repository, with the commits they point at. */
  async branches(): Promise<Map<string, string>> {
    const out = (await this.git(['for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads/'])) as string;
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ') as [string, string]),
    );
  }

  /** Points HEAD at a branch (the default branch of the repository). */
  setHead(branch: string): void {
    fs.writeFileSync(path.join(this.dir, 'HEAD'), `ref: refs/heads/${branch}\n`);
  }

  /** `git fsck --strict`: the list of problems, empty when the repository is sound. */
  async fsck(): Promise<string[]> {
    try {
      await run('git', ['--git-dir', this.dir, 'fsck', '--strict', '--no-progress'], { encoding: 'utf8' });
      return [];
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      return `${e.stdout ?? ''}${e.stderr ?? ''}`.split('\n').filter(Boolean);
    }
  }
}

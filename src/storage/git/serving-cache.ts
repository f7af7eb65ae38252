// Git's own programs serve clone, fetch and push (http-backend.ts), and they need a git directory on disk. A
// node keeps one per repository it serves, built from the rows and brought up to date from them before every
// git request. Nothing in it is the truth: the directory is emptied at start-up, and a node may delete any
// cache at any time; the next request builds it again.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { PackFileWriter } from './pack-file.ts';
import type { GitRepository, ObjectRow } from './repository.ts';
import { isProcessAlive, pidInName } from '../leftovers.ts';
import { makePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../private-files.ts';

/** Packs stay under 2 GiB, so their index needs no 64-bit offsets. */
const MAX_PACK_BYTES = 1 << 30;
/**
 * Packs a refresh may have added to a cache before git merges them into one (git's own gc.autoPackLimit). A
 * refresh adds one for the objects written since the last; only a push runs git's gc, so a snippet written
 * through the API and read by git or a diff page gained a pack each time, for good (helper-69: 199 packs).
 */
const PACKS_BEFORE_REPACK = 50;

export class ServingCaches {
  /** Per repository: what its cache on disk holds. */
  private readonly held = new Map<number, Held>();
  /** Per repository: when it was last refreshed, the least recently refreshed first. */
  private readonly refreshedAt = new Map<number, number>();
  private readonly queues = new Map<number, Promise<unknown>>();
  /** Per repository: git processes reading its cache now (a fetch, a log, a diff); a cache read is not removed. */
  private readonly readers = new Map<number, number>();

  readonly root: string;
  /** Refreshes that found the cache on disk (a hit) or had to build it from the rows (a miss). */
  readonly counts = { hits: 0, misses: 0 };

  /**
   * Caches live in a directory of this process's own below `parent`, so that two processes given one data
   * directory never touch each other's; those of processes that are gone are removed here.
   */
  constructor(
    parent: string,
    /**
     * Caches kept: past `repositories`, those not refreshed for `idleMs` are removed, the least recently
     * refreshed first, so that a node does not keep a copy of every repository it ever served, deleted ones
     * included (helper-69: about 48 KB each, for the life of the process).
     */
    private readonly keep = { repositories: 1000, idleMs: 10 * 60 * 1000 },
  ) {
    makePrivateDir(parent);
    for (const name of fs.readdirSync(parent)) {
      if (!isProcessAlive(pidInName(name, ''))) fs.rmSync(path.join(parent, name), { recursive: true, force: true });
    }
    this.root = path.join(parent, `${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    fs.mkdirSync(this.root, { mode: PRIVATE_DIR_MODE });
  }

  /** Removes this process's caches (at shutdown). */
  close(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  /**
   * Forgets every cache, each after the refresh or push using it is done (a clone reading it then fails, as
   * any request across a reset may): the rows were replaced wholesale (an ephemeral server's reset reuses
   * repository ids, so a write count no longer says what a cache holds).
   */
  async clear(): Promise<void> {
    await Promise.all([...this.queues.keys()].map((id) => this.exclusive(id, async () => {})));
    this.held.clear();
    this.refreshedAt.clear();
    for (const name of fs.readdirSync(this.root))
      if (name.endsWith('.git')) fs.rmSync(path.join(this.root, name), { recursive: true, force: true });
  }

  /** Where push bodies wait, whole, before git reads them (git-serving.ts); made again if it was deleted. */
  spoolDir(): string {
    const dir = path.join(this.root, 'pushes');
    makePrivateDir(dir);
    return dir;
  }

  /** The cache's path below the root (what git http-backend is given). */
  relativePath(repositoryId: number): string {
    return `${repositoryId}.git`;
  }

  /** Whether this node has the repository's cache (it served git or a diff for it since it started). */
  has(repositoryId: number): boolean {
    return fs.existsSync(path.join(this.dirOf(repositoryId), 'HEAD'));
  }

  dirOf(repositoryId: number): string {
    return path.join(this.root, this.relativePath(repositoryId));
  }

  /** Runs `work` while no other request of this node refreshes or pushes to the repository's cache. */
  exclusive<T>(repositoryId: number, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(repositoryId) ?? Promise.resolve();
    const result = previous.then(work, work);
    const settled = result.catch(() => {});
    this.queues.set(repositoryId, settled);
    settled.then(() => {
      if (this.queues.get(repositoryId) === settled) this.queues.delete(repositoryId);
    });
    return result;
  }

  /**
   * Brings the cache in line with the rows: the objects written since it was last brought up to date, then
   * the refs and HEAD exactly as the database has them. Call inside exclusive().
   */
  async refresh(repo: GitRepository): Promise<string> {
    this.refreshedAt.delete(repo.id);
    this.refreshedAt.set(repo.id, Date.now());
    this.removeIdle();
    const dir = this.dirOf(repo.id);
    if (fs.existsSync(path.join(dir, 'HEAD'))) this.counts.hits++;
    else {
      this.counts.misses++;
      fs.rmSync(dir, { recursive: true, force: true });
      for (const sub of ['objects/pack', 'objects/info', 'refs/heads', 'refs/tags'])
        makePrivateDir(path.join(dir, sub));
      fs.writeFileSync(path.join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n', {
        mode: PRIVATE_FILE_MODE,
      });
      this.held.delete(repo.id);
    }
    const held = this.held.get(repo.id) ?? { lastWrite: 0, refsMoved: -1, packs: 0 };
    // Refs first: every object a ref read now names was committed with it, so the query after sees it. They
    // are read only when a write moved them since (the count read before them: a move after it shows next time).
    const moved = await repo.refsMoved();
    const refs = held.refsMoved === moved ? null : await repo.refs();
    const { objects, through } = await repo.objectsWrittenAfter(held.lastWrite);
    let packs = held.packs + (objects.length ? await writePacks(dir, repo, objects) : 0);
    // git repacks for readers running meanwhile: the new pack is in place before the old ones go. Objects no ref
    // reaches stay (-k): the cache is said to hold every object written through lastWrite. One that fails (no
    // descriptor left) is tried again at the next refresh; the cache serves as it is.
    if (packs > PACKS_BEFORE_REPACK)
      packs = await promisify(execFile)('git', ['--git-dir', dir, 'repack', '-a', '-d', '-k', '-q']).then(
        () => 0,
        () => packs,
      );
    if (refs) await writeRefs(dir, refs);
    replaceFile(path.join(dir, 'HEAD'), `ref: refs/heads/${repo.head}\n`);
    this.held.set(repo.id, { lastWrite: through, refsMoved: moved, packs });
    return dir;
  }

  /**
   * The cache brought up to date for git processes that read it outside exclusive() (a fetch, a log, a diff),
   * kept until `release` is called: removing it under a running clone broke the clone.
   */
  async refreshForReading(repo: GitRepository): Promise<{ dir: string; release: () => void }> {
    return this.exclusive(repo.id, async () => {
      const dir = await this.refresh(repo);
      this.readers.set(repo.id, (this.readers.get(repo.id) ?? 0) + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const left = (this.readers.get(repo.id) ?? 1) - 1;
        if (left) this.readers.set(repo.id, left);
        else this.readers.delete(repo.id);
      };
      return { dir, release };
    });
  }

  /**
   * Removes the least recently refreshed caches past `keep`, each once no request of this node uses it; one
   * being read is looked at again at a later refresh.
   */
  private removeIdle(): void {
    for (const [id, at] of this.refreshedAt) {
      if (this.refreshedAt.size <= this.keep.repositories || Date.now() - at < this.keep.idleMs) return;
      if (this.readers.has(id)) continue;
      this.refreshedAt.delete(id);
      this.exclusive(id, async () => {
        if (this.refreshedAt.has(id)) return; // refreshed again meanwhile
        if (this.readers.has(id)) {
          this.refreshedAt.set(id, at);
          return;
        }
        fs.rmSync(this.dirOf(id), { recursive: true, force: true });
        this.held.delete(id);
      }).catch(() => {});
    }
  }
}

/** What a repository's cache holds: objects written through `lastWrite`, refs as of `refsMoved` ref moves. */
interface Held {
  lastWrite: number;
  refsMoved: number;
  /** Packs refreshes wrote since the cache was made or last repacked. */
  packs: number;
}

function replaceFile(file: string, data: string | Buffer): void {
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data, { mode: PRIVATE_FILE_MODE });
  fs.renameSync(tmp, file);
}

/**
 * `objects` as packs (each under MAX_PACK_BYTES, give or take an object), their bodies streamed from the rows;
 * answers how many.
 */
async function writePacks(dir: string, repo: GitRepository, objects: ObjectRow[]): Promise<number> {
  const packDir = path.join(dir, 'objects', 'pack');
  let start = 0;
  let packs = 0;
  while (start < objects.length) {
    // A pack's header counts its objects: those whose inflated sizes (over what they store) add up to the limit.
    let end = start;
    for (let bytes = 0; end < objects.length && (end === start || bytes < MAX_PACK_BYTES); end++)
      bytes += objects[end].size;
    const pack = await PackFileWriter.begin(packDir, end - start);
    try {
      let current: ObjectRow | null = null;
      for await (const { object, piece } of repo.deflatedBodies(objects.slice(start, end))) {
        if (object !== current) await pack.object(object.id, object.type, object.size);
        current = object;
        await pack.body(piece);
      }
      await pack.finish();
      packs++;
    } catch (error) {
      await pack.abandon();
      throw error;
    }
    start = end;
  }
  return packs;
}

/**
 * The database's refs as packed-refs, replaced in one rename so that a git process reading meanwhile sees the
 * old set or the new one; then every loose ref (a push through this node writes those) goes, packed-refs
 * naming what the database does: kept, a push of 5,000 tags had every refresh read 5,000 files.
 */
async function writeRefs(dir: string, refs: Map<string, string>): Promise<void> {
  const lines = [...refs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, id]) => `${id} ${name}\n`);
  replaceFile(path.join(dir, 'packed-refs'), `# pack-refs with: sorted \n${lines.join('')}`);
  // Off the event loop, a batch at a time: removed there one by one, the 10,000 files of a push of 10,000 tags
  // held it 290 ms at the next refresh.
  const walk = async (sub: string): Promise<void> => {
    const entries = await fs.promises.readdir(path.join(dir, sub), { withFileTypes: true });
    const files: string[] = [];
    for (const entry of entries) {
      const name = `${sub}/${entry.name}`;
      if (entry.isDirectory()) await walk(name);
      else if (!entry.name.endsWith('.lock')) files.push(path.join(dir, name));
    }
    for (let i = 0; i < files.length; i += REMOVED_AT_ONCE)
      await Promise.all(files.slice(i, i + REMOVED_AT_ONCE).map((file) => fs.promises.rm(file, { force: true })));
  };
  await walk('refs');
}

/** Loose refs removed at once: a batch of libuv's requests, not ten thousand of them queued together. */
const REMOVED_AT_ONCE = 64;

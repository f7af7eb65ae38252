// Many paths of a commit's tree changed at once: each directory on their paths is read once, changed in memory, and
// written once. One path at a time (tree-path.ts), a commit of a thousand new files in a folder of five thousand
// read and wrote that folder a thousand times: 2-3 s of the event loop.
import { loopSlice } from '../../loop-slice.ts';
import type { ObjectWriter } from './objects.ts';
import { type GitRepository, MissingObject } from './repository.ts';
import type { PathEntry, PathState } from './tree-path.ts';

const DIRECTORY_MODE = '40000';

/** A directory as read: its entries by name (the name's bytes as a latin1 string, which keeps any bytes). */
interface Directory {
  entries: Map<string, PathEntry>;
  /** The subdirectories read so far, by name; one changed is written again, and so is each above it. */
  opened: Map<string, Directory>;
  changed: boolean;
}

const nameOf = (part: string) => Buffer.from(part, 'utf8').toString('latin1');

/**
 * The directories one edit reads or makes at most: a path may be 2,048 deep, so thirty thousand paths of new
 * directories each (a body of a few dozen megabytes) would otherwise make tens of millions.
 */
export const MAX_DIRECTORIES = 50_000;

/** Thrown when an edit would read or make more than MAX_DIRECTORIES directories. */
export class TooManyDirectories extends Error {
  constructor() {
    super(`a tree edit reads or makes more than ${MAX_DIRECTORIES} directories`);
  }
}

export class TreeEdit {
  private readonly slice = loopSlice();
  private directories = 0;

  private constructor(
    private readonly repo: GitRepository,
    private readonly root: Directory,
  ) {}

  /** The tree `rootTree` (null: none) to change. */
  static async open(repo: GitRepository, rootTree: string | null): Promise<TreeEdit> {
    const edit = new TreeEdit(repo, { entries: new Map(), opened: new Map(), changed: false });
    if (rootTree) edit.root.entries = await edit.read(rootTree);
    return edit;
  }

  /** What `filePath` names now. */
  async stat(filePath: string): Promise<PathState> {
    const parts = filePath.split('/').map(nameOf);
    let dir = this.root;
    for (const [i, name] of parts.entries()) {
      const entry = dir.entries.get(name);
      if (!entry) return { kind: 'none' };
      if (i === parts.length - 1) {
        if (entry.mode !== DIRECTORY_MODE) return { kind: 'file', id: entry.id, mode: entry.mode };
        // A folder the changes before emptied is gone from the tree they write.
        return dir.opened.get(name)?.entries.size === 0 ? { kind: 'none' } : { kind: 'directory' };
      }
      if (entry.mode !== DIRECTORY_MODE) return { kind: 'below-file' };
      dir = await this.open(dir, name, entry);
    }
    throw new Error('unreachable: the last part of a path ends the walk');
  }

  /**
   * Puts `entry` at `filePath` (null: removes what is there), making the directories on the way. Call it for a
   * path stat says is nothing or a file.
   */
  async put(filePath: string, entry: PathEntry | null): Promise<void> {
    const parts = filePath.split('/').map(nameOf);
    let dir = this.root;
    for (const name of parts.slice(0, -1)) {
      dir.changed = true;
      const found = dir.entries.get(name);
      if (found) dir = await this.open(dir, name, found);
      else {
        if (!entry) return;
        this.count();
        const made: Directory = { entries: new Map(), opened: new Map(), changed: true };
        dir.entries.set(name, { mode: DIRECTORY_MODE, id: '' });
        dir.opened.set(name, made);
        dir = made;
      }
    }
    dir.changed = true;
    const last = parts[parts.length - 1];
    // What was a folder there (one the changes emptied) is not written back over the new entry.
    dir.opened.delete(last);
    if (entry) dir.entries.set(last, entry);
    else dir.entries.delete(last);
  }

  /**
   * Writes every changed directory, deepest first, and returns the root tree's id (an empty one when none is left).
   * A blob the writer holds that no written directory names (a file written, then written again) is dropped.
   */
  async write(writer: ObjectWriter): Promise<string> {
    const named = new Set<string>();
    const root = (await this.writeDirectory(writer, this.root, named)) ?? writer.add('tree', Buffer.alloc(0));
    writer.dropBlobsExcept(named);
    return root;
  }

  /** A directory's tree id, written again when it changed; null once it holds nothing (git keeps no empty one). */
  private async writeDirectory(writer: ObjectWriter, dir: Directory, named: Set<string>): Promise<string | null> {
    for (const [name, sub] of dir.opened) {
      if (!sub.changed) continue;
      const id = await this.writeDirectory(writer, sub, named);
      if (id) dir.entries.set(name, { mode: DIRECTORY_MODE, id });
      else dir.entries.delete(name);
    }
    if (!dir.entries.size) return null;
    // Git's order: names as bytes, a directory's as if it ended in '/'.
    const keyed = [...dir.entries].map(
      ([name, e]) => [e.mode === DIRECTORY_MODE ? `${name}/` : name, name, e] as const,
    );
    keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const parts: Buffer[] = [];
    for (const [, name, e] of keyed) {
      named.add(e.id);
      parts.push(Buffer.from(`${e.mode} ${name}\0`, 'latin1'), Buffer.from(e.id, 'hex'));
      if (this.slice.over()) await this.slice.pass();
    }
    return writer.add('tree', Buffer.concat(parts));
  }

  private async open(parent: Directory, name: string, entry: PathEntry): Promise<Directory> {
    let dir = parent.opened.get(name);
    if (!dir) {
      this.count();
      dir = { entries: await this.read(entry.id), opened: new Map(), changed: false };
      parent.opened.set(name, dir);
    }
    return dir;
  }

  private count(): void {
    if (++this.directories > MAX_DIRECTORIES) throw new TooManyDirectories();
  }

  /** A tree's entries by name, read once. */
  private async read(id: string): Promise<Map<string, PathEntry>> {
    const object = await this.repo.object(id);
    if (!object) throw new MissingObject(`repository ${this.repo.id} has no tree ${id}`);
    if (object.type !== 'tree') throw new Error(`${id} is not a tree of repository ${this.repo.id}`);
    const { body } = object;
    const entries = new Map<string, PathEntry>();
    for (let at = 0; at < body.length; ) {
      const space = body.indexOf(0x20, at);
      const nul = space === -1 ? -1 : body.indexOf(0, space);
      // Pushes are checked by receive.fsckObjects; a damaged tree from elsewhere must not send the loop back.
      if (nul === -1 || nul + 21 > body.length) throw new Error('a tree entry without its name or id');
      entries.set(body.toString('latin1', space + 1, nul), {
        mode: body.toString('latin1', at, space),
        id: body.toString('hex', nul + 1, nul + 21),
      });
      at = nul + 21;
      if (this.slice.over()) await this.slice.pass();
    }
    return entries;
  }
}

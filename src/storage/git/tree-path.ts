// One path of a commit's tree, read and rewritten level by level: a write of one file makes new trees only for
// the directories on its path, and every other entry keeps its bytes (a name that is not UTF-8 included).
import { loopSlice } from '../../loop-slice.ts';
import type { ObjectWriter } from './objects.ts';
import { type GitRepository, MissingObject } from './repository.ts';

/** What the path names: nothing, a file (any entry not a tree), a directory, or nothing below a file. */
export type PathState =
  | { kind: 'none' }
  | { kind: 'file'; id: string; mode: string }
  | { kind: 'directory' }
  | { kind: 'below-file' };

/** The entry a path's last level gets: its blob id and mode. */
export interface PathEntry {
  id: string;
  mode: string;
}

/** A tree on the path: its body, where the path's entry is in it, or where it would go. */
interface Level {
  body: Buffer;
  /** The byte range of the entry named by the path at this level, or null. */
  entry: { start: number; end: number } | null;
  /** Where a new entry of that name goes in git's order, when there is none. */
  insertAt: number;
}

const DIRECTORY_MODE = '40000';
const SLASH = 0x2f;

export class TreePath {
  private constructor(
    /** The names of the path's parts, as bytes. */
    private readonly names: Buffer[],
    /** The trees read, root first: one for each directory the path goes through that exists. */
    private readonly levels: Level[],
    readonly state: PathState,
  ) {}

  /** Reads the trees on `filePath` from `rootTree` (null: an empty repository). */
  static async read(repo: GitRepository, rootTree: string | null, filePath: string): Promise<TreePath> {
    const names = filePath.split('/').map((part) => Buffer.from(part));
    const levels: Level[] = [];
    let treeId = rootTree;
    const slice = loopSlice();
    for (let depth = 0; depth < names.length; depth++) {
      if (!treeId) return new TreePath(names, levels, { kind: 'none' });
      if (slice.over()) await slice.pass();
      const last = depth === names.length - 1;
      const level = find(await treeBody(repo, treeId), names[depth], !last);
      levels.push(level);
      if (!level.entry) return new TreePath(names, levels, { kind: 'none' });
      const { body, entry } = level;
      const space = body.indexOf(0x20, entry.start);
      const mode = body.toString('latin1', entry.start, space);
      const id = body.toString('hex', entry.end - 20, entry.end);
      if (mode === DIRECTORY_MODE) {
        if (last) return new TreePath(names, levels, { kind: 'directory' });
        treeId = id;
      } else return new TreePath(names, levels, last ? { kind: 'file', id, mode } : { kind: 'below-file' });
    }
    throw new Error('unreachable: the last part of a path ends the walk');
  }

  /**
   * Writes the trees on the path with `entry` at its end (null: removed, and with it each directory it leaves
   * empty) and returns the new root tree's id. Valid for state 'none' (directories made as needed) and 'file'.
   */
  write(writer: ObjectWriter, entry: PathEntry | null): string {
    if (this.state.kind === 'directory' || this.state.kind === 'below-file')
      throw new Error(`a path naming a ${this.state.kind} cannot be written`);
    let child = entry && entryBytes(entry.mode, this.names[this.names.length - 1], entry.id);
    for (let depth = this.names.length - 1; depth >= 0; depth--) {
      const level = this.levels[depth];
      const inserted = child ? [child] : [];
      const body = !level
        ? Buffer.concat(inserted) // a directory made on the way
        : level.entry
          ? Buffer.concat([
              level.body.subarray(0, level.entry.start),
              ...inserted,
              level.body.subarray(level.entry.end),
            ])
          : Buffer.concat([level.body.subarray(0, level.insertAt), ...inserted, level.body.subarray(level.insertAt)]);
      if (!body.length && depth > 0) {
        child = null; // an empty directory is no entry at all in git
        continue;
      }
      const id = writer.add('tree', body);
      if (depth === 0) return id;
      child = entryBytes(DIRECTORY_MODE, this.names[depth - 1], id);
    }
    throw new Error('unreachable: the root tree is always written');
  }
}

function entryBytes(mode: string, name: Buffer, id: string): Buffer {
  return Buffer.concat([Buffer.from(`${mode} `), name, Buffer.from([0]), Buffer.from(id, 'hex')]);
}

async function treeBody(repo: GitRepository, id: string): Promise<Buffer> {
  const object = await repo.object(id);
  if (!object) throw new MissingObject(`repository ${repo.id} has no tree ${id}`);
  if (object.type !== 'tree') throw new Error(`${id} is not a tree of repository ${repo.id}`);
  return object.body;
}

/**
 * The entry named `name` in a tree's body, and where an entry of that name (a directory when `directory`)
 * would go in git's order, which compares a directory's name as if it ended in '/'. One pass over the bytes,
 * nothing made per entry: a tree may hold 50,000.
 */
function find(body: Buffer, name: Buffer, directory: boolean): Level {
  let entry: Level['entry'] = null;
  let insertAt = -1;
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    const nul = space === -1 ? -1 : body.indexOf(0, space);
    const end = nul + 21;
    // Pushes are checked by receive.fsckObjects; a damaged tree from elsewhere must not send the loop back.
    if (nul === -1 || end > body.length) throw new Error('a tree entry without its name or id');
    const nameLength = nul - space - 1;
    if (nameLength === name.length && body.compare(name, 0, name.length, space + 1, nul) === 0) {
      entry = { start: at, end };
      break;
    }
    if (insertAt === -1) {
      const isDirectory =
        space - at === DIRECTORY_MODE_BYTES.length && body.compare(DIRECTORY_MODE_BYTES, 0, 5, at, space) === 0;
      if (compareNames(body, space + 1, nul, isDirectory, name, directory) > 0) insertAt = at;
    }
    at = end;
  }
  return { body, entry, insertAt: insertAt === -1 ? body.length : insertAt };
}

const DIRECTORY_MODE_BYTES = Buffer.from(DIRECTORY_MODE);

/** Git's base_name_compare: bytes up to the shorter name, then the next byte, '/' after a directory's name. */
function compareNames(
  body: Buffer,
  start: number,
  end: number,
  isDirectory: boolean,
  name: Buffer,
  directory: boolean,
) {
  const length = Math.min(end - start, name.length);
  const common = body.compare(name, 0, length, start, start + length);
  if (common !== 0) return common;
  const a = end - start > length ? body[start + length] : isDirectory ? SLASH : 0;
  const b = name.length > length ? name[length] : directory ? SLASH : 0;
  return a - b;
}

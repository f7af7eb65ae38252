// Git objects made in-process in git's own formats (an object id is the SHA-1 of "<type> <size>\0<body>"),
// and their parsing (packs for serving: pack-file.ts). Spawning git costs ~4 ms a process here: writes and reads
// never do; only serving clone and push runs git.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  id: string;
  type: ObjectType;
  body: Buffer;
  /** The body deflated, when it was deflated already (a large blob, off the event loop: prepareBlob). */
  deflated?: Buffer;
  /** The upload holding the deflated body as parts, when it was written so already (object-parts.ts). */
  parts?: number;
}

export interface TreeFile {
  path: string;
  blobId: string;
  /** 100644 unless given (100755 executables, 120000 symlinks, 160000 submodules are kept as they are). */
  mode?: string;
}

export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  time: number;
}

export function objectId(type: ObjectType, body: Buffer): string {
  return crypto.createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/**
 * Blobs from this size on, alone or together in one write, are hashed and deflated in Node's thread pool
 * rather than on the event loop.
 */
const OFF_THREAD_BYTES = 1024 * 1024;

/** A blob's id and its body deflated, worked out off the event loop (prepareBlob). */
export interface PreparedBlob {
  id: string;
  deflated: Buffer;
  /** The upload holding `deflated` as parts, once written so (object-parts.ts#withUploads). */
  parts?: number;
}

const deflateAsync = promisify(zlib.deflate);

/**
 * A large blob's id and deflated body without holding the event loop: deflated in Node's thread pool, hashed
 * a mebibyte at a time between other work (for 50 MiB, SHA-1 and deflate in one go held it about 200 ms).
 * Null for a small blob, which ObjectWriter hashes in place.
 */
export async function prepareBlob(content: Buffer): Promise<PreparedBlob | null> {
  return content.length < OFF_THREAD_BYTES ? null : prepareOffThread(content);
}

/**
 * prepareBlob for the blobs of one write: all of them off the event loop once together they reach the size
 * one large blob would (ten files just under it held the loop about 300 ms).
 */
export function prepareBlobs(contents: Buffer[]): Promise<(PreparedBlob | null)[]> {
  const total = contents.reduce((sum, c) => sum + c.length, 0);
  return Promise.all(contents.map((c) => (total < OFF_THREAD_BYTES ? null : prepareOffThread(c))));
}

async function prepareOffThread(content: Buffer): Promise<PreparedBlob> {
  const deflating = deflateAsync(content, { level: deflateLevel(content.length) });
  const hash = crypto.createHash('sha1').update(`blob ${content.length}\0`);
  for (let at = 0; at < content.length; at += OFF_THREAD_BYTES) {
    hash.update(content.subarray(at, at + OFF_THREAD_BYTES));
    await nextTurn();
  }
  return { id: hash.digest('hex'), deflated: await deflating };
}

/** A directory of a commit being written: its files (mode and blob id) and its directories by name. */
type Directory = Map<string, Directory | { mode: string; id: string }>;

/** Trees written on the event loop in one go, at most (about 5 µs each). */
const TREES_BETWEEN_YIELDS = 1024;

/** A tree's body: its entries in git's order, which compares a directory as if its name ended in '/'. */
function treeBody(entries: { name: string; mode: string; id: string }[]): Buffer {
  const key = (e: { name: string; mode: string }) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name);
  if (entries.length > 1) entries.sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.id, 'hex')]));
}

/** Collects the objects of one commit; the repository stores them with its ref move (repository.ts). */
export class ObjectWriter {
  private readonly pending = new Map<string, { type: ObjectType; body: Buffer; deflated?: Buffer; parts?: number }>();

  add(type: ObjectType, body: Buffer): string {
    const id = objectId(type, body);
    if (!this.pending.has(id)) this.pending.set(id, { type, body });
    return id;
  }

  /** A blob; `prepared` (prepareBlob) when its id and deflated body were worked out already. */
  blob(content: Buffer, prepared?: PreparedBlob | null): string {
    if (!prepared) return this.add('blob', content);
    if (!this.pending.has(prepared.id))
      this.pending.set(prepared.id, {
        type: 'blob',
        body: content,
        deflated: prepared.deflated,
        parts: prepared.parts,
      });
    return prepared.id;
  }

  /**
   * Writes the trees for a flat list of files and returns the root tree id, deepest first and without
   * recursion, with other requests' turns between every TREES_BETWEEN_YIELDS trees: a path may be 2,048
   * directories deep, each one a tree of its own.
   */
  async tree(files: TreeFile[]): Promise<string> {
    const root: Directory = new Map();
    for (const f of files) {
      const parts = f.path.split('/');
      let dir = root;
      for (let i = 0; i < parts.length - 1; i++) {
        let next = dir.get(parts[i]);
        if (!(next instanceof Map)) {
          next = new Map();
          dir.set(parts[i], next);
        }
        dir = next;
      }
      dir.set(parts[parts.length - 1], { mode: f.mode ?? '100644', id: f.blobId });
    }
    const ids = new Map<Directory, string>();
    const stack: { dir: Directory; childrenWritten: boolean }[] = [{ dir: root, childrenWritten: false }];
    while (stack.length) {
      const top = stack.pop()!;
      if (!top.childrenWritten) {
        stack.push({ dir: top.dir, childrenWritten: true });
        for (const child of top.dir.values())
          if (child instanceof Map) stack.push({ dir: child, childrenWritten: false });
        continue;
      }
      const entries = [...top.dir].map(([name, child]) =>
        child instanceof Map ? { name, mode: '40000', id: ids.get(child)! } : { name, ...child },
      );
      ids.set(top.dir, this.add('tree', treeBody(entries)));
      if (ids.size % TREES_BETWEEN_YIELDS === 0) await nextTurn();
    }
    return ids.get(root)!;
  }

  commit(input: { tree: string; parent: string | null; author: Signature; message: string }): string {
    const lines = [
      `tree ${input.tree}`,
      ...(input.parent ? [`parent ${input.parent}`] : []),
      `author ${signatureLine(input.author)}`,
      `committer ${signatureLine(input.author)}`,
    ];
    return this.add('commit', Buffer.from(`${lines.join('\n')}\n\n${input.message}\n`));
  }

  /** An annotated tag named `name` of the commit `object`. */
  tag(input: { object: string; name: string; tagger: Signature; message: string }): string {
    const lines = [
      `object ${input.object}`,
      'type commit',
      `tag ${input.name}`,
      `tagger ${signatureLine(input.tagger)}`,
    ];
    return this.add('tag', Buffer.from(`${lines.join('\n')}\n\n${input.message}\n`));
  }

  /** Drops the blobs this writer holds but `named` (those the trees written name). */
  dropBlobsExcept(named: ReadonlySet<string>): void {
    for (const [id, object] of this.pending) if (object.type === 'blob' && !named.has(id)) this.pending.delete(id);
  }

  /** The objects collected so far, each once. */
  objects(): GitObject[] {
    return [...this.pending].map(([id, { type, body, deflated, parts }]) =>
      parts !== undefined ? { id, type, body, parts } : deflated ? { id, type, body, deflated } : { id, type, body },
    );
  }
}

export const PACK_TYPES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
export const TYPE_OF_PACK_TYPE: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

/** An object's body deflated: what the database stores and what a pack entry carries after its header. */
export function deflateBody(body: Buffer): Buffer {
  const deflated = zlib.deflateSync(body, deflateOptions(body.length));
  // zlib writes into chunks of 16 KiB: a small body's few bytes are copied out, or each would hold its whole
  // chunk (a write of 20,000 small trees held 340 MB).
  return deflated.length < deflated.buffer.byteLength / 2 ? Buffer.from(deflated) : deflated;
}

/**
 * A body smaller than zlib's 32 KiB window is deflated with a window its size (the same bytes out): setting up
 * the full window and its memory took most of a small body's deflate (a tree of 28 bytes: 47 µs against 8).
 * Inflating reads the window size from the stream's header, so git and our readers take either.
 */
function deflateOptions(size: number): zlib.ZlibOptions {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(size + 262))));
  return { level: deflateLevel(size), windowBits, memLevel: Math.max(1, windowBits - 7) };
}

/** Large bodies are deflated fast rather than small. */
export const deflateLevel = (size: number) =>
  size > 1 << 20 ? zlib.constants.Z_BEST_SPEED : zlib.constants.Z_DEFAULT_COMPRESSION;

/** Bodies from this size on are deflated in Node's thread pool by deflateOffLoop (a 1 MiB tree: about 20 ms). */
const OFF_LOOP_DEFLATE_BYTES = 64 * 1024;

/** The large bodies among `objects` deflated off the event loop, so that storing them does not deflate them on it. */
export async function deflateOffLoop(objects: GitObject[]): Promise<GitObject[]> {
  return Promise.all(
    objects.map(async (o) =>
      o.deflated || o.parts !== undefined || o.body.length < OFF_LOOP_DEFLATE_BYTES
        ? o
        : { ...o, deflated: await deflateAsync(o.body, deflateOptions(o.body.length)) },
    ),
  );
}

/** Who made an object and when, as git writes it (in UTC). */
const signatureLine = (s: Signature) => `${cleanIdentity(s.name)} <${cleanIdentity(s.email)}> ${s.time} +0000`;

/** Git refuses '<', '>' and newlines inside identities; GitLab strips them the same way. */
function cleanIdentity(value: string): string {
  return value.replace(/[<>\n\r\0]/g, '').trim() || 'unknown';
}

export interface TreeItemRow {
  mode: string;
  name: string;
  id: string;
}

/** The name of the first of a tree's entries whose name is not UTF-8 (with U+FFFD for its bad bytes), or null. */
export function nameNotUtf8(body: Buffer): string | null {
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    const nul = space === -1 ? -1 : body.indexOf(0, space);
    if (nul === -1) return null; // not a tree git would take (receive.fsckObjects refuses it first)
    if (!isUtf8(body.subarray(space + 1, nul))) return body.toString('utf8', space + 1, nul);
    at = nul + 21;
  }
  return null;
}

/** A tree's entries in their stored (git's) order; a name that is not UTF-8 reads with U+FFFD. */
export function parseTree(body: Buffer): TreeItemRow[] {
  const out: TreeItemRow[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = space === -1 ? -1 : body.indexOf(0, space);
    // A damaged tree (not from a push: receive.fsckObjects checks those) must not send the loop back, adding
    // entries until the heap is gone.
    if (nul === -1 || nul + 21 > body.length) throw new Error('a tree entry without its name or id');
    out.push({
      mode: body.toString('latin1', at, space),
      name: body.toString('utf8', space + 1, nul),
      id: body.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return out;
}

export interface ParsedSignature {
  name: string;
  email: string;
  /** ISO 8601 in the signature's own offset, as `git log --format=%aI` writes it. */
  iso: string;
  /** Seconds since the epoch. */
  time: number;
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  author: ParsedSignature;
  committer: ParsedSignature;
  message: string;
}

const EPOCH_ISO = new Date(0).toISOString().replace('.000Z', 'Z');

/**
 * A signature (`Name <email> 1700000000 +0100`) read as git's split_ident_line reads it: the name ends at the
 * first `<` (the spaces before it dropped), the email at the first `>` after it, and the date follows the last
 * `>`. By index, not by a pattern: a header is free text up to a commit's size, and a pattern that tried each
 * `<` as the name's end took seconds for a line of 100,000 of them.
 */
function parseSignature(value: string): ParsedSignature {
  const open = value.indexOf('<');
  const close = open === -1 ? -1 : value.indexOf('>', open + 1);
  if (close === -1) return { name: value, email: '', iso: EPOCH_ISO, time: 0 };
  const name = value.slice(0, open).trimEnd();
  const email = value.slice(open + 1, close);
  const date = /^ (-?\d+) ([+-])(\d\d)(\d\d)$/.exec(value.slice(value.lastIndexOf('>') + 1));
  if (!date) return { name, email, iso: EPOCH_ISO, time: 0 };
  const time = Number(date[1]);
  const offsetMinutes = (date[2] === '-' ? -1 : 1) * (Number(date[3]) * 60 + Number(date[4]));
  const local = new Date((time + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  return { name, email, time, iso: `${local}${date[2]}${date[3]}:${date[4]}` };
}

/** A commit's signature when it has none: parsed once, as a walk through history parses every commit it takes. */
const NO_SIGNATURE: ParsedSignature = Object.freeze(parseSignature(''));

export function parseCommit(body: Buffer): ParsedCommit {
  // The headers and the message decoded apart: a parent's id or a name sliced from the whole text kept all of it,
  // message included (V8's slice of a string holds the string it was cut from), for as long as it was kept.
  const split = body.indexOf('\n\n');
  return { ...parseCommitHeaders(body), message: split === -1 ? '' : body.toString('utf8', split + 2) };
}

/** A commit's headers alone, its message (up to a commit's size) not decoded: what a sort by time needs. */
export function parseCommitHeaders(body: Buffer): Omit<ParsedCommit, 'message'> {
  const split = body.indexOf('\n\n');
  const headers = body.toString('utf8', 0, split === -1 ? body.length : split).split('\n');
  const commit: Omit<ParsedCommit, 'message'> = {
    tree: '',
    parents: [],
    author: NO_SIGNATURE,
    committer: NO_SIGNATURE,
  };
  for (const line of headers) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') commit.tree = value;
    else if (key === 'parent') commit.parents.push(value);
    else if (key === 'author') commit.author = parseSignature(value);
    else if (key === 'committer') commit.committer = parseSignature(value);
  }
  return commit;
}

/** An annotated tag: what it points at, who made it and when (null: no tagger line), and its message. */
export function parseTag(body: Buffer): { object: string; tagger: ParsedSignature | null; message: string } {
  const text = body.toString('utf8');
  const split = text.indexOf('\n\n');
  let tagger: ParsedSignature | null = null;
  for (const line of (split === -1 ? text : text.slice(0, split)).split('\n'))
    if (line.startsWith('tagger ')) tagger = parseSignature(line.slice('tagger '.length));
  return { object: tagTarget(body), tagger, message: split === -1 ? '' : text.slice(split + 2) };
}

/** The object an annotated tag points at. */
export function tagTarget(body: Buffer): string {
  return /^object ([0-9a-f]{40})/.exec(body.toString('latin1'))?.[1] ?? '';
}

/** The objects in what `git cat-file --batch` printed: "<id> <type> <size>\n<body>\n" each. */
export function parseCatFileBatch(data: Buffer): GitObject[] {
  const out: GitObject[] = [];
  let at = 0;
  while (at < data.length) {
    const nl = data.indexOf(10, at);
    const [id, type, size] = data.subarray(at, nl).toString('latin1').split(' ');
    const length = Number(size);
    out.push({ id, type: type as ObjectType, body: Buffer.from(data.subarray(nl + 1, nl + 1 + length)) });
    at = nl + 1 + length + 1;
  }
  return out;
}

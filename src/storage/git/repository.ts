// A git repository kept as rows (git_objects, git_refs; migration 0005). Reads are row lookups, ref ->
// commit -> tree -> blob, and never spawn git; a write stores its objects and moves its ref by compare-and-swap
// in the caller's transaction, so the objects, the ref and the caller's other rows commit together or not at
// all. Git itself runs only to serve clone and push, from a serving cache built from these rows
// (serving-cache.ts).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { loopSlice } from '../../loop-slice.ts';
import { type Insertable, type Kysely, sql } from 'kysely';
import type { Database, GitObjectsTable, GitRepositoryRow } from '../db/schema.ts';
import {
  deflateBody,
  type GitObject,
  type ObjectType,
  PACK_TYPES,
  parseCommit,
  parseCommitHeaders,
  parseTree,
  TYPE_OF_PACK_TYPE,
  tagTarget,
} from './objects.ts';
import type { ObjectCache } from './object-cache.ts';
import { containsText, fetchPage, isPostgres, type PageWindow } from '../db/page.ts';
import { claimUploads, partsOf, readParts } from './object-parts.ts';
import { pipeline, Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { trimEndOf } from '../../text-scan.ts';
import { MAX_REF_NAME_BYTES } from './push-commands.ts';

const inflateAsync = promisify(zlib.inflate);
const NO_BYTES = Buffer.alloc(0);

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

/**
 * An object a read needed is not in the repository: its rows went with the repository (a snippet or project
 * deleted while the read went on), or, if the repository is still there, they were lost (fsck reports it).
 */
export class MissingObject extends Error {}

export class RefConflict extends Error {
  constructor(readonly ref: string) {
    super(`${ref} moved while it was being updated`);
  }
}

const STEPS_BETWEEN_YIELDS = 500;
/**
 * Commits a walk through history reads at once when it meets one it has not read (readAhead): the first time
 * a few, twice as many each time after up to the most (a short walk reads little it will not use). Rows over
 * the byte limits are left to be read alone, so a read-ahead keeps at most 1,024 commits of 4 KiB and as many
 * trees of 8 KiB (12 MiB) whatever a push holds; most are a few hundred bytes.
 */
const READ_AHEAD_FIRST = 16;
const READ_AHEAD_MOST = 512;
const READ_AHEAD_COMMIT_BYTES = 4 * 1024;
const READ_AHEAD_TREE_BYTES = 8 * 1024;
/**
 * A walk stops reading ahead once it has read more than this many rows for each commit it took, beyond a first
 * READ_AHEAD_MOST: within one large push's write the rows are in no order a walk can use, and commits too
 * large to read ahead are read alone; there a batch costs more than the statements it saves.
 */
const READ_AHEAD_ROWS_PER_COMMIT = 4;
const ROWS_BETWEEN_YIELDS = 256;
/**
 * Object rows read in one query where a repository's every object may be read (objectsWrittenAfter): a page
 * of 10,000 held the event loop 44-98 ms.
 */
const OBJECT_ROWS_A_PAGE = 5_000;

/** A binary heap: `pop` answers the item `before` puts first. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    let at = items.push(item) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.before(items[parent], item) <= 0) break;
      items[at] = items[parent];
      at = parent;
    }
    items[at] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last !== undefined) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= items.length) break;
        const child = left + 1 < items.length && this.before(items[left + 1], items[left]) < 0 ? left + 1 : left;
        if (this.before(last, items[child]) <= 0) break;
        items[at] = items[child];
        at = child;
      }
      items[at] = last;
    }
    return top;
  }
}

/**
 * Entries one listing of a tree walks at most, unless told otherwise. A push of a few small trees, each naming
 * the next a hundred times, makes millions of paths: listed whole they took gigabytes and the event loop.
 */
export const TREE_ENTRIES_LIMIT = 50_000;

/** A listing that would walk more than `limit` entries (listTree). */
export class TreeTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the tree holds more than ${limit} entries`);
  }
}

/** For a listing's `.catch`: `fallback` when the tree is too large; any other error is thrown on. */
export const unlessTooLarge =
  <T>(fallback: T) =>
  (error: unknown): T => {
    if (error instanceof TreeTooLarge) return fallback;
    throw error;
  };

/**
 * A ref that would be a folder of another, or inside one (`refs/heads/x` and `refs/heads/x/y`): git keeps
 * refs as paths and cannot hold both, so a repository with the two could not be served to any git client.
 * The message is git's own.
 */
export class RefNameClash extends Error {
  constructor(ref: string, existing: string) {
    super(`cannot lock ref '${ref}': '${existing}' exists; cannot create '${ref}'`);
  }
}

/** A ref's move: from `old` (null: it must not exist) to `new` (null: it goes). */
export interface RefMove {
  ref: string;
  old: string | null;
  new: string | null;
}

/** Refs looked at, or moved one by one, between two turns of the event loop where a push's refs are taken. */
const REFS_A_TURN = 500;

/**
 * RefNameClash for the first new ref of `moves` that would be a folder of a ref, or inside one, among `refs`
 * and the new refs before it (as moveRef would find them one after the other).
 */
async function refuseNameClashes(refs: ReadonlyMap<string, string>, moves: readonly RefMove[]): Promise<void> {
  const names = new Set(refs.keys());
  // Each folder a ref is in (refs/heads/a for refs/heads/a/b), with one ref in it.
  const inFolder = new Map<string, string>();
  const add = (name: string) => {
    names.add(name);
    for (const folder of refFolders(name)) if (!inFolder.has(folder)) inFolder.set(folder, name);
  };
  let steps = 0;
  for (const name of refs.keys()) {
    add(name);
    if (++steps % REFS_A_TURN === 0) await nextTurn();
  }
  for (const move of moves) {
    if (move.old !== null || move.new === null) continue;
    const clash = inFolder.get(move.ref) ?? refFolders(move.ref).find((folder) => names.has(folder));
    if (clash) throw new RefNameClash(move.ref, clash);
    add(move.ref);
    if (++steps % REFS_A_TURN === 0) await nextTurn();
  }
}

/** The folders of a ref below refs/<kind>/: refs/heads/a and refs/heads/a/b for refs/heads/a/b/c. */
function refFolders(name: string): string[] {
  const parts = name.split('/');
  const folders: string[] = [];
  for (let end = 3; end < parts.length; end++) folders.push(parts.slice(0, end).join('/'));
  return folders;
}

const FULL_ID = /^[0-9a-f]{40}$/;
const SHORT_ID = /^[0-9a-f]{4,39}$/;
/** Rows per INSERT: well under SQLite's limit of bound parameters. */
const INSERT_BATCH = 500;
/** Bytes of bodies per INSERT, at most (but one larger body alone): SQLite writes each on the event loop. */
const INSERT_BATCH_BYTES = 1024 * 1024;

/** `rows` in INSERTs of at most INSERT_BATCH rows and INSERT_BATCH_BYTES of bodies. */
function* statementBatches<R extends { data: Uint8Array }>(rows: R[]): Generator<R[]> {
  let batch: R[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (batch.length && (batch.length >= INSERT_BATCH || bytes + row.data.length > INSERT_BATCH_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(row);
    bytes += row.data.length;
  }
  if (batch.length) yield batch;
}
/** Inflated bytes of small bodies read in one statement (their rows hold them deflated, so at most this). */
const BODY_BATCH_BYTES = 4 << 20;

export const oidBytes = (id: string) => Buffer.from(id, 'hex');
const typeOfMode = (mode: string): TreeEntry['type'] =>
  mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';

export interface StoredObject {
  type: ObjectType;
  body: Buffer;
}

/** Objects a push brought and has not stored yet: their sizes known at once, their bodies read on request. */
export interface PendingObjects {
  /** Undefined when the push brought no object with that id. */
  sizeOf(id: string): number | undefined;
  read(ids: readonly string[]): Promise<Map<string, StoredObject>>;
}

const NO_PENDING: PendingObjects = { sizeOf: () => undefined, read: async () => new Map() };

/** An object deflated as its row keeps it; `size` is the inflated size. */
export interface DeflatedObject {
  id: string;
  type: ObjectType;
  size: number;
  /** Empty when `parts` holds it. */
  data: Buffer;
  /** The upload holding the deflated body as parts (object-parts.ts). */
  parts?: number;
}

/** The write count a new repository's first objects are stored under (git_repositories.writes starts there). */
export const FIRST_WRITE = 1;

/** The rows of objects stored by the `write`th write, but for their repository's id. */
export const objectRows = (write: number, objects: readonly GitObject[]) =>
  objects.map((o) => ({
    oid: oidBytes(o.id),
    type: PACK_TYPES[o.type],
    size: o.body.length,
    write,
    ...(o.parts !== undefined ? { data: NO_BYTES, parts: o.parts } : { data: o.deflated ?? deflateBody(o.body) }),
  }));

/**
 * Inserts object rows (those the repository has already are left as they are), deflating the bodies a batch
 * at a time with other requests' turns between: a write of deep paths holds thousands of trees.
 */
export async function insertObjects(
  db: Kysely<Database>,
  repositoryId: number,
  write: number,
  objects: readonly GitObject[],
): Promise<void> {
  const rows: Insertable<GitObjectsTable>[] = [];
  for (let at = 0; at < objects.length; at += DEFLATED_BETWEEN_YIELDS) {
    if (at > 0) await nextTurn();
    const batch = objectRows(write, objects.slice(at, at + DEFLATED_BETWEEN_YIELDS));
    for (const row of batch) rows.push({ repository_id: repositoryId, ...row });
  }
  await insertObjectRows(db, repositoryId, rows);
}

/** Small objects deflated on the event loop in one go, at most (about 10-20 µs each). */
const DEFLATED_BETWEEN_YIELDS = 256;

/**
 * Inserts rows of git_objects, a batch a statement; an object the repository has already is left as it is.
 * The uploads of the rows inserted are claimed in the same transaction (object-parts.ts).
 */
async function insertObjectRows(
  db: Kysely<Database>,
  repositoryId: number,
  rows: Insertable<GitObjectsTable>[],
): Promise<void> {
  let first = true;
  for (const batch of statementBatches(rows)) {
    // SQLite runs each statement on the event loop: other requests' turns between them.
    if (!first) await nextTurn();
    first = false;
    await db
      .insertInto('git_objects')
      .values(batch)
      .onConflict((c) => c.columns(['repository_id', 'oid']).doNothing())
      .execute();
  }
  const uploads = rows.flatMap((r) => (r.parts === null || r.parts === undefined ? [] : [r.parts]));
  await claimUploads(db, repositoryId, uploads);
}

/** An object as its row describes it, without its body: `parts` names the upload holding a large one. */
export interface ObjectRow {
  id: string;
  type: number;
  size: number;
  parts: number | null;
}

/** A large blob to send: its size, its first bytes (to tell its type) and its bytes, as a new stream each time. */
export interface LargeBlob {
  size: number;
  head: Buffer;
  open(): Readable;
}

/** How much of a large blob's start `head` holds: as much as a sniff of its type reads (http/raw.ts). */
const HEAD_BYTES = 8192;

/**
 * Objects larger than this are inflated in the thread pool and sent as LargeBlob, whatever their stored size:
 * a file of zeros deflates to little.
 */
const LARGE_BLOB_BYTES = 1024 * 1024;

/** A blob of `size` bytes whose stored (deflated) body `deflated` gives, a piece at a time. */
async function largeBlob(deflated: () => AsyncIterable<Buffer>, size: number): Promise<LargeBlob> {
  // A piece read ahead at most: a reader that never reads holds a part and the buffers of its socket.
  const open = () =>
    pipeline(Readable.from(deflated(), { objectMode: true, highWaterMark: 1 }), zlib.createInflate(), () => {});
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    // Leaving the loop destroys the stream, and with it the reading of further parts.
    for await (const chunk of open()) {
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (bytes >= HEAD_BYTES) break;
    }
  } catch (error) {
    // Parts cut short (zlib's "unexpected end of file"): deleted since the row was read, or lost.
    throw new MissingObject(`a large blob's parts end early: ${(error as Error).message}`);
  }
  return { size, head: Buffer.concat(chunks).subarray(0, HEAD_BYTES), open };
}

const REFS_HEADS = 'refs/heads/';

/** The most ancestry steps a ref may take (`main~100000` walks a commit at a time; git has no bound either). */
const MAX_ANCESTRY_STEPS = 10_000;

/**
 * A ref's trailing ancestry steps, read from its end without a pattern (a ref may be 4 KB of `~`): `~n` (n first
 * parents; n is 1 when left out) and `^n` (the n-th parent, `^0` the commit itself). None when the steps are
 * malformed or ask for more than MAX_ANCESTRY_STEPS, so that the whole is looked up as a name (and found none).
 */
function ancestrySuffix(ref: string): { base: string; steps: { kind: '~' | '^'; n: number }[] } {
  let start = ref.length;
  while (start > 0 && /[~^0-9]/.test(ref[start - 1])) start--;
  // The suffix starts at its first operator: digits before it belong to the name (`v1.0~2`).
  while (start < ref.length && ref[start] !== '~' && ref[start] !== '^') start++;
  const none = { base: ref, steps: [] };
  if (start === 0 || start === ref.length) return none;
  const steps: { kind: '~' | '^'; n: number }[] = [];
  let total = 0;
  for (let at = start; at < ref.length; ) {
    const kind = ref[at] as '~' | '^';
    let end = at + 1;
    while (end < ref.length && ref[end] >= '0' && ref[end] <= '9') end++;
    const n = end > at + 1 ? Number(ref.slice(at + 1, end)) : 1;
    total += kind === '~' ? n : 1;
    if (!Number.isSafeInteger(n) || total > MAX_ANCESTRY_STEPS) return none;
    steps.push({ kind, n });
    at = end;
  }
  return { base: ref.slice(0, start), steps };
}

export class GitRepository {
  /**
   * @param pending objects a push brought that are not stored yet: read before the rows, never cached, so
   * a push can be checked as the commit it would make before anything of it is written.
   */
  constructor(
    private readonly db: Kysely<Database>,
    readonly row: GitRepositoryRow,
    private readonly cache: ObjectCache,
    private readonly pending: PendingObjects = NO_PENDING,
  ) {}

  get id(): number {
    return this.row.id;
  }

  /** The branch HEAD names. */
  get head(): string {
    return this.row.head;
  }

  /** The same repository read and written through another connection or transaction. */
  on(db: Kysely<Database>): GitRepository {
    return new GitRepository(db, this.row, this.cache);
  }

  /** This repository as it would read with a push's objects added (see the constructor). */
  withPending(pending: PendingObjects): GitRepository {
    return new GitRepository(this.db, this.row, this.cache, pending);
  }

  // --- objects ---------------------------------------------------------------------------------------------

  /** One object, or null when this repository has no object with that id. */
  async object(id: string): Promise<StoredObject | null> {
    return (await this.objects([id])).get(id) ?? null;
  }

  /** Several objects by id; those this repository does not have are absent from the answer. */
  async objects(ids: readonly string[]): Promise<Map<string, StoredObject>> {
    const out = new Map<string, StoredObject>();
    const missing: string[] = [];
    const pushed: string[] = [];
    for (const id of new Set(ids)) {
      if (this.pending.sizeOf(id) !== undefined) {
        pushed.push(id);
        continue;
      }
      const kept = this.cache.get(this.id, id);
      if (kept) out.set(id, kept);
      else if (FULL_ID.test(id)) missing.push(id);
    }
    if (pushed.length) for (const [id, object] of await this.pending.read(pushed)) out.set(id, object);
    for (let i = 0; i < missing.length; i += INSERT_BATCH) {
      const rows = await this.db
        .selectFrom('git_objects')
        .select(['oid', 'type', 'size', 'data', 'parts'])
        .where('repository_id', '=', this.id)
        .where('oid', 'in', missing.slice(i, i + INSERT_BATCH).map(oidBytes))
        .execute();
      for (const r of rows) {
        const id = Buffer.from(r.oid).toString('hex');
        out.set(id, await this.keep(id, r));
      }
    }
    return out;
  }

  /** An object from its row, inflated, and kept in the object cache. */
  private async keep(
    id: string,
    row: { type: number; size: number; data: Uint8Array; parts: number | null },
  ): Promise<StoredObject> {
    // A large body is inflated in the thread pool, not on the event loop (a small row may inflate large).
    const deflated = row.parts === null ? row.data : await readParts(this.db, row.parts);
    const body =
      row.parts === null
        ? row.size > LARGE_BLOB_BYTES
          ? await inflateAsync(deflated)
          : zlib.inflateSync(deflated)
        : await inflateAsync(deflated).catch((error: Error) => {
            // Parts cut short: deleted since the row was read, or lost.
            throw new MissingObject(`a large object's parts end early: ${error.message}`);
          });
    const object = { type: TYPE_OF_PACK_TYPE[row.type], body };
    this.cache.set(this.id, id, object);
    return object;
  }

  /**
   * A blob to send: whole when it is small, else a LargeBlob that inflates its stored body a piece at a time as
   * its reader takes it. Null when this repository has no blob with that id (none, or another kind of object).
   */
  async sendableBlob(id: string): Promise<Buffer | LargeBlob | null> {
    if (this.pending.sizeOf(id) === undefined && FULL_ID.test(id)) {
      const kept = this.cache.get(this.id, id);
      if (kept) return kept.type === 'blob' ? kept.body : null;
      // One statement for either kind: the body of a row that is not large, only the size and parts of one that is.
      const row = await this.db
        .selectFrom('git_objects')
        .select([
          'type',
          'size',
          'parts',
          sql<Buffer>`case when parts is null then data else ${Buffer.alloc(0)} end`.as('data'),
        ])
        .where('repository_id', '=', this.id)
        .where('oid', '=', oidBytes(id))
        .executeTakeFirst();
      if (!row || TYPE_OF_PACK_TYPE[row.type] !== 'blob') return null;
      if (row.size <= LARGE_BLOB_BYTES) return (await this.keep(id, row)).body;
      const { parts, data } = row;
      return largeBlob(
        parts !== null
          ? () => partsOf(this.db, parts)
          : async function* () {
              yield data;
            },
        row.size,
      );
    }
    const object = await this.object(id);
    return object?.type === 'blob' ? object.body : null;
  }

  /**
   * Every object added by a write after the `write`th, without its body (see serving-cache.ts), read a page of
   * rows at a time in id order (a repository's million objects read and mapped at once held the event loop a
   * second, at the first clone on a node); and the write they go `through`, to ask after next time. Only writes
   * committed before the first page: a push commits its objects in batches meanwhile, each under a write of its
   * own, and a batch's objects between two pages, below the page's ids, would never be read.
   */
  async objectsWrittenAfter(write: number): Promise<{ objects: ObjectRow[]; through: number }> {
    const row = await this.db
      .selectFrom('git_repositories')
      .select('writes')
      .where('id', '=', this.id)
      .executeTakeFirst();
    // Deleted since it was found (its project or snippet deleted meanwhile): its objects went with it.
    if (!row) throw new MissingObject(`repository ${this.id} is gone`);
    const through = row.writes;
    const objects: ObjectRow[] = [];
    for (let after: Buffer | null = null; ; ) {
      let query = this.db
        .selectFrom('git_objects')
        .select(['oid', 'type', 'size', 'parts'])
        .where('repository_id', '=', this.id)
        .where('write', '>', write)
        .where('write', '<=', through);
      if (after) query = query.where('oid', '>', after);
      const rows = await query.orderBy('oid').limit(OBJECT_ROWS_A_PAGE).execute();
      for (const r of rows)
        objects.push({
          id: Buffer.from(r.oid).toString('hex'),
          type: r.type,
          size: r.size,
          parts: r.parts,
        });
      if (rows.length < OBJECT_ROWS_A_PAGE) return { objects, through: Math.max(through, write) };
      after = rows[rows.length - 1].oid;
      await nextTurn();
    }
  }

  /**
   * The stored (deflated) bodies of `objects`, in their order, a piece at a time: small bodies read a batch
   * of rows at a time, a large one a part at a time, so that no more than a batch is in memory. The event loop
   * takes a turn between batches: a node's first clone of 100,000 small objects went 870 ms without one.
   */
  async *deflatedBodies(objects: readonly ObjectRow[]): AsyncGenerator<{ object: ObjectRow; piece: Buffer }> {
    for (let start = 0; start < objects.length; ) {
      let end = start;
      for (let bytes = 0; end < objects.length && end - start < INSERT_BATCH && bytes < BODY_BATCH_BYTES; end++)
        if (objects[end].parts === null) bytes += objects[end].size;
      const batch = objects.slice(start, end);
      const small = batch.filter((o) => o.parts === null).map((o) => oidBytes(o.id));
      const rows = small.length
        ? await this.db
            .selectFrom('git_objects')
            .select(['oid', 'data'])
            .where('repository_id', '=', this.id)
            .where('oid', 'in', small)
            .execute()
        : [];
      const data = new Map(rows.map((r) => [Buffer.from(r.oid).toString('hex'), Buffer.from(r.data)]));
      for (const object of batch) {
        if (object.parts === null) {
          const piece = data.get(object.id);
          if (!piece) throw new Error(`object ${object.id} of repository ${this.id} is gone`);
          yield { object, piece };
        } else for await (const piece of partsOf(this.db, object.parts)) yield { object, piece };
      }
      start = end;
      if (start < objects.length) await nextTurn();
    }
  }

  /** Sizes of blobs by id, read from their rows without inflating them, a batch a turn. */
  private async sizes(ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of ids) {
      const size = this.pending.sizeOf(id);
      if (size !== undefined) out.set(id, size);
    }
    const unique = [...new Set(ids)].filter((id) => !out.has(id));
    for (let i = 0; i < unique.length; i += INSERT_BATCH) {
      const rows = await this.db
        .selectFrom('git_objects')
        .select(['oid', 'size'])
        .where('repository_id', '=', this.id)
        .where('oid', 'in', unique.slice(i, i + INSERT_BATCH).map(oidBytes))
        .execute();
      for (const r of rows) out.set(Buffer.from(r.oid).toString('hex'), r.size);
      // better-sqlite3 answers at once: a folder of 50,000 files asked 100 batches in one turn (300-450 ms).
      await nextTurn();
    }
    return out;
  }

  /**
   * Stores the objects this repository does not have yet, tagged with a new write count (serving-cache.ts
   * asks for objects by it). Call inside the transaction that moves the ref naming them.
   */
  async store(objects: readonly GitObject[]): Promise<void> {
    if (!objects.length) return;
    const write = await this.nextWrite();
    if (write === undefined) throw new Error(`repository ${this.id} is gone`);
    await insertObjects(this.db, this.id, write, objects);
  }

  /** The repository's write count, counted up for a write now; undefined when its row is gone. */
  private async nextWrite(): Promise<number | undefined> {
    const row = await this.db
      .updateTable('git_repositories')
      .set({ writes: sql`writes + 1` })
      .where('id', '=', this.id)
      .returning('writes')
      .executeTakeFirst();
    return row?.writes;
  }

  /**
   * Stores a batch of a push's objects, deflated, under a new write count (as `store`): in the transaction that
   * moves the refs naming them, or (a large push) in one of its own before it, when a push refused after leaves
   * them dangling. A repository deleted meanwhile refuses the batch (RefConflict).
   */
  async storeDeflatedBatch(batch: readonly DeflatedObject[]): Promise<void> {
    const write = await this.nextWrite();
    if (write === undefined) throw new RefConflict('the repository');
    await insertObjectRows(
      this.db,
      this.id,
      batch.map((o) => ({
        repository_id: this.id,
        oid: oidBytes(o.id),
        type: PACK_TYPES[o.type],
        size: o.size,
        write,
        data: o.data,
        parts: o.parts ?? null,
      })),
    );
  }

  /**
   * Keeps objects this node stored in its object cache; call once their transaction has committed (the
   * cache holds nothing that may yet roll back). The next write of a snippet reads its files from there.
   */
  remember(objects: readonly GitObject[]): void {
    for (const o of objects) this.cache.set(this.id, o.id, o);
  }

  // --- refs --------------------------------------------------------------------------------------------------

  /** Every ref (full name) with the object it points at. */
  async refs(): Promise<Map<string, string>> {
    const rows = await this.db
      .selectFrom('git_refs')
      .select(['name', 'oid'])
      .where('repository_id', '=', this.id)
      .orderBy('name')
      .execute();
    return new Map(rows.map((r) => [r.name, Buffer.from(r.oid).toString('hex')]));
  }

  /** The branches (short names) with the commits they point at. */
  async branches(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const [name, id] of await this.refs())
      if (name.startsWith('refs/heads/')) out.set(name.slice('refs/heads/'.length), id);
    return out;
  }

  async readRef(name: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('git_refs')
      .select('oid')
      .where('repository_id', '=', this.id)
      .where('name', '=', name)
      .executeTakeFirst();
    return row ? Buffer.from(row.oid).toString('hex') : null;
  }

  /** Which of `names` (full ref names) the repository has. */
  async existingRefs(names: readonly string[]): Promise<Set<string>> {
    if (!names.length) return new Set();
    const rows = await this.db
      .selectFrom('git_refs')
      .select('name')
      .where('repository_id', '=', this.id)
      .where('name', 'in', names)
      .execute();
    return new Set(rows.map((r) => r.name));
  }

  readBranch(branch: string): Promise<string | null> {
    return this.readRef(`refs/heads/${branch}`);
  }

  /**
   * One page of the branches (short names) in byte order, as git lists them, each with the commit it points at;
   * with `match`, those whose name holds its text (any case) where it says.
   */
  branchesPage(match: { text: string; where: 'anywhere' | 'prefix' | 'suffix' } | null, window: PageWindow) {
    const postgres = isPostgres(this.db);
    let q = this.db
      .selectFrom('git_refs')
      .select([sql<string>`substr(name, ${REFS_HEADS.length + 1})`.as('name'), 'oid'])
      .where('repository_id', '=', this.id)
      .where((eb) =>
        postgres
          ? eb('name', 'like', `${REFS_HEADS}%`)
          : // As hasBranches: SQLite compares bytes through the key, where its LIKE reads every ref.
            eb.and([eb('name', '>=', REFS_HEADS), eb('name', '<', 'refs/heads0')]),
      );
    if (match)
      q = q.where(
        containsText(
          postgres ? 'postgres' : 'sqlite',
          sql`substr(name, ${REFS_HEADS.length + 1})`,
          match.text,
          match.where,
        ),
      );
    // Byte order whatever the database's collation (git's order, and SQLite's).
    q = q.orderBy(postgres ? sql`name COLLATE "C"` : sql`name`);
    return fetchPage(this.db, q, window);
  }

  /** Whether the repository has a branch. */
  async hasBranches(): Promise<boolean> {
    const row = await this.db
      .selectFrom('git_refs')
      .select('name')
      .where('repository_id', '=', this.id)
      .where((eb) =>
        isPostgres(this.db)
          ? eb('name', 'like', 'refs/heads/%')
          : // SQLite compares bytes, through the key ('0' follows '/'); its LIKE ignores case and reads every ref.
            eb.and([eb('name', '>=', 'refs/heads/'), eb('name', '<', 'refs/heads0')]),
      )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Moves `name` from `expected` (null: must not exist) to `next` (null: delete it). Two writers racing on one
   * ref: exactly one wins, the other gets RefConflict. Call once the objects it names are stored: in the same
   * transaction, or (a push) committed before it.
   */
  async moveRef(name: string, expected: string | null, next: string | null): Promise<void> {
    await this.countRefMove();
    await this.moveOneRef(name, expected, next);
  }

  private async moveOneRef(name: string, expected: string | null, next: string | null): Promise<void> {
    let changed: bigint;
    if (expected === null && next !== null) {
      await this.refuseNameClash(name);
      const result = await this.db
        .insertInto('git_refs')
        .values({ repository_id: this.id, name, oid: oidBytes(next) })
        .onConflict((c) => c.columns(['repository_id', 'name']).doNothing())
        .executeTakeFirst();
      changed = result.numInsertedOrUpdatedRows ?? 0n;
    } else if (expected !== null && next === null) {
      const result = await this.db
        .deleteFrom('git_refs')
        .where('repository_id', '=', this.id)
        .where('name', '=', name)
        .where('oid', '=', oidBytes(expected))
        .executeTakeFirst();
      changed = result.numDeletedRows;
    } else if (expected !== null && next !== null) {
      const result = await this.db
        .updateTable('git_refs')
        .set({ oid: oidBytes(next) })
        .where('repository_id', '=', this.id)
        .where('name', '=', name)
        .where('oid', '=', oidBytes(expected))
        .executeTakeFirst();
      changed = result.numUpdatedRows;
    } else return;
    if (changed !== 1n) throw new RefConflict(name);
  }

  /**
   * Whether moveRefs would take the moves now: RefConflict or RefNameClash as it would throw them. A push asks
   * before it stores its objects, so that one refused at once stores nothing; moveRefs still decides.
   */
  async checkRefMoves(moves: readonly RefMove[]): Promise<void> {
    const refs = await this.refs();
    for (const move of moves) if ((refs.get(move.ref) ?? null) !== move.old) throw new RefConflict(move.ref);
    await refuseNameClashes(refs, moves);
  }

  /**
   * Moves a push's refs as moveRef moves each, the new ones checked against the refs read once and written a
   * batch of rows at a time: one at a time, each checked by a query, 5,000 new tags kept the instance's other
   * writes waiting 1.7 s. Call inside the push's transaction, once the objects they name are stored.
   */
  async moveRefs(moves: readonly RefMove[]): Promise<void> {
    await this.countRefMove();
    const created = moves.filter((m) => m.old === null && m.new !== null);
    if (created.length) {
      await refuseNameClashes(await this.refs(), created);
      for (let start = 0; start < created.length; start += INSERT_BATCH) {
        const batch = created.slice(start, start + INSERT_BATCH);
        const result = await this.db
          .insertInto('git_refs')
          .values(batch.map((m) => ({ repository_id: this.id, name: m.ref, oid: oidBytes(m.new!) })))
          .onConflict((c) => c.columns(['repository_id', 'name']).doNothing())
          .executeTakeFirst();
        if (Number(result.numInsertedOrUpdatedRows ?? 0n) !== batch.length) throw new RefConflict(batch[0].ref);
        await nextTurn();
      }
    }
    for (const [i, move] of moves.entries()) {
      if (move.old === null) continue;
      await this.moveOneRef(move.ref, move.old, move.new);
      // SQLite's queries resolve without waiting for I/O: a push of a thousand refs held the loop 0.5-0.8 s.
      if ((i + 1) % REFS_A_TURN === 0) await nextTurn();
    }
  }

  /** How many writes moved this repository's refs, as committed now. */
  async refsMoved(): Promise<number> {
    const row = await this.db
      .selectFrom('git_repositories')
      .select('refs_moved')
      .where('id', '=', this.id)
      .executeTakeFirst();
    return row?.refs_moved ?? -1;
  }

  /**
   * Counts a write that moves refs, first: the count's update locks the repository's row before any ref's, in
   * the order every writer takes them (an object store and lockRefs take that row first too). Bumped after the
   * refs, a push deadlocked a file write on PostgreSQL (helper-60). Call inside the write's transaction.
   */
  private async countRefMove(): Promise<void> {
    await this.db
      .updateTable('git_repositories')
      .set({ refs_moved: sql`refs_moved + 1` })
      .where('id', '=', this.id)
      .execute();
  }

  /**
   * Stores a new commit's objects and moves `branch` from `expected` (null: creates it) to the commit: the one
   * way a write through the API or a page commits. RefConflict when the branch moved since `expected` was
   * read, RefNameClash when a new branch would clash with another's path; nothing of it is kept once the
   * caller's transaction rolls back.
   */
  async commitToBranch(branch: string, expected: string | null, commit: string, objects: readonly GitObject[]) {
    await this.store(objects);
    await this.moveRef(`refs/heads/${branch}`, expected, commit);
  }

  /**
   * The repository's row, locked for the transaction, as every ref move locks it first (countRefMove): a write
   * that reads a branch and then moves it (a file write's last try) reads it after any other writer's move.
   */
  async lockRefs(): Promise<void> {
    await this.db.updateTable('git_repositories').set({ writes: sql`writes` }).where('id', '=', this.id).execute();
  }

  /**
   * Refuses a new ref that would be a folder of an existing one or inside one. Its caller counted the move
   * first, which locks the repository's row until the transaction ends: two nodes creating `x` and `x/y` at
   * once take turns and the second sees the first (SQLite's writers take turns anyway).
   */
  private async refuseNameClash(name: string): Promise<void> {
    const folders = refFolders(name);
    const inside = `${name}/`;
    const clash = await this.db
      .selectFrom('git_refs')
      .select('name')
      .where('repository_id', '=', this.id)
      .where((eb) =>
        eb.or([
          isPostgres(this.db)
            ? // In characters, as substr counts them (a string's length counts UTF-16 units). A range would
              // compare by the database's collation, not git's byte order.
              sql<boolean>`substr(${eb.ref('name')}, 1, ${[...inside].length}) = ${inside}`
            : // SQLite compares the bytes: the names that begin with `inside` (and '0' follows '/'), through the
              // key, where substr read every ref of the repository for each new one.
              eb.and([eb('name', '>=', inside), eb('name', '<', `${name}0`)]),
          ...(folders.length ? [eb('name', 'in', folders)] : []),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    if (clash) throw new RefNameClash(name, clash.name);
  }

  /** Points HEAD at a branch. */
  async setHead(branch: string): Promise<void> {
    await this.db.updateTable('git_repositories').set({ head: branch }).where('id', '=', this.id).execute();
    this.row.head = branch;
  }

  // --- reads at a revision -----------------------------------------------------------------------------------

  /**
   * Resolves a branch, tag, full or abbreviated commit id, or HEAD to a commit id, the way `git rev-parse`
   * does (refs before abbreviated ids), and from there git's ancestry suffixes (`main~2`, `HEAD^`, `v1^2`, as
   * Gitaly takes them); null when it names none or names something else.
   */
  async resolveCommit(ref: string, opts: { shortestId?: number } = {}): Promise<string | null> {
    // No ref is longer than a push may name one (in bytes; a character is one at least): a body's 15 MB "ref"
    // was otherwise sent to the database whole.
    if (ref.length > MAX_REF_NAME_BYTES) return null;
    const { base, steps } = ancestrySuffix(ref);
    if (steps.length === 0) return this.resolveName(ref, opts.shortestId);
    let id = await this.resolveName(base, opts.shortestId);
    // Commits read from the object cache resolve at once: other requests go first now and then.
    const slice = loopSlice();
    for (const step of steps) {
      if (!id) return null;
      if (step.kind === '^') id = step.n === 0 ? id : ((await this.commit(id)).parents[step.n - 1] ?? null);
      else
        for (let i = 0; i < step.n && id; i++) {
          id = (await this.commit(id)).parents[0] ?? null;
          if (slice.over()) await slice.pass();
        }
      if (slice.over()) await slice.pass();
    }
    return id;
  }

  /** resolveCommit without ancestry suffixes; an abbreviated id is tried from `shortestId` digits (git's 4). */
  private async resolveName(ref: string, shortestId = 4): Promise<string | null> {
    if (ref.startsWith('-') || /[\0\n\\]|\.\.|@\{|[~^:?*[]/.test(ref)) return null;
    if (FULL_ID.test(ref)) return this.peelToCommit(ref);
    if (ref === 'HEAD') ref = `refs/heads/${this.head}`;
    const candidates = ref.startsWith('refs/') ? [ref] : [`refs/${ref}`, `refs/tags/${ref}`, `refs/heads/${ref}`];
    const rows = await this.db
      .selectFrom('git_refs')
      .select(['name', 'oid'])
      .where('repository_id', '=', this.id)
      .where('name', 'in', candidates)
      .execute();
    const found = candidates.map((c) => rows.find((r) => r.name === c)).find(Boolean);
    if (found) return this.peelToCommit(Buffer.from(found.oid).toString('hex'));
    if (!SHORT_ID.test(ref) || ref.length < shortestId) return null;
    const low = oidBytes(ref.padEnd(40, '0'));
    const high = oidBytes(ref.padEnd(40, 'f'));
    const matches = await this.db
      .selectFrom('git_objects')
      .select('oid')
      .where('repository_id', '=', this.id)
      .where('oid', '>=', low)
      .where('oid', '<=', high)
      .limit(2)
      .execute();
    return matches.length === 1 ? this.peelToCommit(Buffer.from(matches[0].oid).toString('hex')) : null;
  }

  /** A commit id for a commit or an annotated tag of one; null for anything else or a missing object. */
  private async peelToCommit(id: string): Promise<string | null> {
    for (let depth = 0; depth < 10; depth++) {
      const object = await this.object(id);
      if (!object) return null;
      if (object.type === 'commit') return id;
      if (object.type !== 'tag') return null;
      id = tagTarget(object.body);
    }
    return null;
  }

  /** The commit `id` as a listing of commits gives it. */
  async commitInfo(id: string): Promise<CommitInfo> {
    return infoOf(id, await this.commit(id));
  }

  /** When the commit `id` was committed, in seconds since the epoch (its message not read). */
  async committedAt(id: string): Promise<number> {
    return parseCommitHeaders(await this.commitBody(id)).committer.time;
  }

  async commit(id: string) {
    return parseCommit(await this.commitBody(id));
  }

  private async commitBody(id: string): Promise<Buffer> {
    const object = await this.object(id);
    if (!object) throw new MissingObject(`repository ${this.id} has no object ${id}`);
    if (object.type !== 'commit') throw new Error(`${id} is not a commit of repository ${this.id}`);
    return object.body;
  }

  private async tree(id: string) {
    const object = await this.object(id);
    if (!object) throw new MissingObject(`repository ${this.id} has no object ${id}`);
    if (object.type !== 'tree') throw new Error(`${id} is not a tree of repository ${this.id}`);
    return parseTree(object.body);
  }

  /** The id and mode of the entry at `filePath` in a commit ('' is the root tree), or null. */
  async entryAt(commit: string, filePath: string): Promise<{ id: string; mode: string } | null> {
    let current = { id: (await this.commit(commit)).tree, mode: '40000' };
    // A tree over the object cache's largest is read and parsed again at each look-up (30-45 ms for 1 MiB): after
    // a few milliseconds of levels, other requests go first.
    const slice = loopSlice();
    for (const part of filePath.split('/').filter(Boolean)) {
      if (current.mode !== '40000') return null;
      if (slice.over()) await slice.pass();
      const next = (await this.tree(current.id)).find((e) => e.name === part);
      if (!next) return null;
      current = next;
    }
    return current;
  }

  /** The bytes of `filePath` in `commit`, or null when there is no such file or it is larger than `maxBytes`. */
  async readFile(commit: string, filePath: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    const entry = await this.entryAt(commit, filePath);
    if (!entry || typeOfMode(entry.mode) !== 'blob') return null;
    if (maxBytes !== Number.POSITIVE_INFINITY && ((await this.sizes([entry.id])).get(entry.id) ?? 0) > maxBytes)
      return null;
    return (await this.object(entry.id))?.body ?? null;
  }

  /** The blob readFile reads, to send (sendableBlob), with its id; null as for readFile. */
  async sendableFile(commit: string, filePath: string): Promise<{ id: string; content: Buffer | LargeBlob } | null> {
    const entry = await this.entryAt(commit, filePath);
    if (!entry || typeOfMode(entry.mode) !== 'blob') return null;
    const content = await this.sendableBlob(entry.id);
    return content && { id: entry.id, content };
  }

  /**
   * The entries of a commit's tree, or of the directory `path` in it, in git's order, the way `git ls-tree -l`
   * lists them: recursive unless told otherwise (then blobs only, unless `trees` asks for trees as well).
   */
  async listTree(
    commit: string,
    opts: { path?: string; recursive?: boolean; trees?: boolean; limit?: number } = {},
  ): Promise<readonly TreeEntry[]> {
    const recursive = opts.recursive !== false;
    const limit = opts.limit ?? TREE_ENTRIES_LIMIT;
    const dir = trimEndOf(opts.path ?? '', '/');
    const start = await this.entryAt(commit, dir);
    if (start?.mode !== '40000') return [];
    // A push's objects are read before they are stored: nothing listed through them is kept.
    const keeping = this.pending === NO_PENDING;
    const key = `${start.id}\n${dir}\n${recursive}\n${opts.trees === true}`;
    const kept = keeping ? this.cache.listing(this.id, key) : undefined;
    if (kept) {
      if (kept.walked > limit) throw new TreeTooLarge(limit);
      return kept.entries;
    }
    const out: Omit<TreeEntry, 'size'>[] = [];
    let walked = 0;
    // By time, not by entries: a tree not in the object cache is a query and an inflate on the event loop
    // (SQLite), and 1,000 directories read that way held it 240 ms.
    const slice = loopSlice();
    const walk = async (treeId: string, prefix: string) => {
      for (const e of await this.tree(treeId)) {
        if (++walked > limit) throw new TreeTooLarge(limit);
        if (slice.over()) await slice.pass();
        const type = typeOfMode(e.mode);
        const entry = { mode: e.mode.padStart(6, '0'), type, id: e.id, path: `${prefix}${e.name}` };
        if (type !== 'tree' || !recursive || opts.trees) out.push(entry);
        if (type === 'tree' && recursive) await walk(e.id, `${entry.path}/`);
      }
    };
    await walk(start.id, dir ? `${dir}/` : '');
    const sizes = await this.sizes(out.filter((e) => e.type === 'blob').map((e) => e.id));
    const entries = out.map((e) => ({ ...e, size: sizes.get(e.id) ?? 0 }));
    if (keeping) this.cache.keepListing(this.id, key, { entries, walked });
    return entries;
  }

  /** The modes of a commit's files that are not a plain file's (100644), by path: executables. */
  async fileModes(commit: string): Promise<Map<string, string>> {
    const modes = new Map<string, string>();
    const walk = async (treeId: string, prefix: string) => {
      for (const e of await this.tree(treeId)) {
        if (e.mode === '40000') await walk(e.id, `${prefix}${e.name}/`);
        else if (e.mode !== '100644') modes.set(`${prefix}${e.name}`, e.mode);
      }
    };
    await walk((await this.commit(commit)).tree, '');
    return modes;
  }

  /** Several blobs by id. */
  async readBlobs(ids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for (const [id, object] of await this.objects(ids)) out.set(id, object.body);
    return out;
  }

  /**
   * Commits reachable from `from` (one commit, or several: git log --all), newest first by commit time, as `git
   * log` lists them; with a path, only those that changed it, following git's default history simplification (a
   * merge that kept the path of one parent is followed along that parent only); with `firstParent`, following
   * only each commit's first parent (git log --first-parent).
   */
  async log(
    from: string | readonly string[],
    opts: {
      skip: number;
      limit: number;
      path?: string;
      match?: (info: CommitInfo) => boolean;
      firstParent?: boolean;
      /** What of each listed commit's message is kept (domain/commit-messages.ts), as each is read. */
      message?: (message: string) => string;
    },
  ): Promise<CommitInfo[]> {
    const out: CommitInfo[] = [];
    let skip = opts.skip;
    await this.walk(typeof from === 'string' ? [from] : from, opts.path, opts.firstParent ?? false, (info) => {
      if (opts.match && !opts.match(info)) return true;
      if (skip > 0) skip--;
      else out.push(opts.message ? { ...info, message: opts.message(info.message) } : info);
      return out.length < opts.limit;
    });
    return out;
  }

  /**
   * Into the object cache: the commit `id`, the `count` written before it (by write, then id; migration 0015's
   * index) and as many of its own write after it, and with `trees` their root trees. A history is mostly
   * written in the order it is walked, so a cold walk reads a batch at a time instead of a statement a commit;
   * within one push's write the order is the ids', and a walk meets more misses there. Answers the commit rows
   * read.
   */
  private async readAhead(id: string, count: number, trees: boolean): Promise<number> {
    if (!FULL_ID.test(id)) return 0;
    const of = (columns: string) =>
      sql`(SELECT ${sql.raw(columns)} FROM git_objects WHERE repository_id = ${this.id} AND oid = ${oidBytes(id)})`;
    const commits = (above: boolean) =>
      this.db
        .selectFrom('git_objects')
        .select([
          'oid',
          'type',
          'size',
          // The limit on the body, not on the rows: LIMIT counts every commit, large ones too. (A body this
          // small is never stored as parts.)
          sql<Buffer | null>`CASE WHEN size <= ${READ_AHEAD_COMMIT_BYTES} THEN data END`.as('data'),
        ])
        .where('repository_id', '=', this.id)
        // A literal, as the partial index's own condition is, so that the planner takes the index.
        .where(sql<boolean>`type = 1`)
        .where(
          above
            ? sql<boolean>`(write, oid) > ${of('write, oid')} AND write = ${of('write')}`
            : sql<boolean>`(write, oid) <= ${of('write, oid')}`,
        )
        .orderBy('write', above ? 'asc' : 'desc')
        .orderBy('oid', above ? 'asc' : 'desc')
        .limit(count)
        .execute();
    // Those of its own write on both sides of it (a push's commits are in no order by id), then the older ones.
    const rows = [...(await commits(false)), ...(await commits(true))];
    const treeIds: Buffer[] = [];
    let inflated = 0;
    for (const { data, ...row } of rows) {
      // Rows inflate on the event loop: other requests go first now and then.
      if (++inflated % ROWS_BETWEEN_YIELDS === 0) await nextTurn();
      const commitId = Buffer.from(row.oid).toString('hex');
      if (data === null || this.cache.has(this.id, commitId)) continue;
      const kept = await this.keep(commitId, { ...row, data, parts: null });
      if (!trees) continue;
      const tree = parseCommit(kept.body).tree;
      if (!this.cache.has(this.id, tree)) treeIds.push(oidBytes(tree));
    }
    if (!treeIds.length) return rows.length;
    const treeRows = await this.db
      .selectFrom('git_objects')
      .select(['oid', 'type', 'size', 'data'])
      .where('repository_id', '=', this.id)
      .where('oid', 'in', treeIds)
      .where('size', '<=', READ_AHEAD_TREE_BYTES)
      .execute();
    for (const row of treeRows) await this.keep(Buffer.from(row.oid).toString('hex'), { ...row, parts: null });
    return rows.length;
  }

  private async walk(
    starts: readonly string[],
    filePath: string | undefined,
    firstParent: boolean,
    visit: (c: CommitInfo) => boolean,
  ): Promise<void> {
    const seen = new Set<string>(starts);
    // Newest commit time first; among equal times, the one queued first (git's date order).
    const queue = new Heap<{ id: string; time: number; order: number }>((a, b) => b.time - a.time || a.order - b.order);
    let order = 0;
    // Commits read from the object cache resolve at once: every so many, or after a few milliseconds of them
    // (a tree over the cache's largest is read and parsed each time), other requests go first (a merge of
    // thousands of parents is as many steps).
    let steps = 0;
    const slice = loopSlice();
    const step = async () => {
      if (++steps % STEPS_BETWEEN_YIELDS === 0 || slice.over()) await slice.pass();
    };
    let ahead = READ_AHEAD_FIRST;
    // Where a statement is a round trip (PostgreSQL); SQLite's are calls in this process, and there a batch
    // costs more than the statements it saves (bench/commit-walk.ts, bench/RESULTS.md).
    const readsAhead = isPostgres(this.db);
    let rowsRead = 0;
    let taken = 0;
    const readIfMissing = async (id: string) => {
      if (this.pending.sizeOf(id) !== undefined || this.cache.has(this.id, id)) return;
      if (!readsAhead || rowsRead > READ_AHEAD_MOST + READ_AHEAD_ROWS_PER_COMMIT * taken) return;
      this.cache.counts.misses++; // the lookup the cache did not answer, as get() would have counted it
      rowsRead += await this.readAhead(id, ahead, filePath !== undefined);
      ahead = Math.min(2 * ahead, READ_AHEAD_MOST);
      // Its rows were inflated on the event loop: other requests go first before the walk goes on.
      await nextTurn();
    };
    const commitOf = async (id: string) => {
      await readIfMissing(id);
      return this.commit(id);
    };
    const push = async (id: string) => {
      await step();
      queue.push({ id, time: (await commitOf(id)).committer.time, order: order++ });
    };
    for (const start of seen) await push(start);
    // The path's entry by the tree it is looked up in, with how deep: commits that share a tree, or a folder on
    // the way, read and parse it once a walk (130 commits sharing a 700 KB root tree read it 260 times).
    const parts = (filePath ?? '').split('/').filter(Boolean);
    const entries = new Map<string, string | null>();
    const entryBelow = async (tree: string, depth: number): Promise<string | null> => {
      if (depth === parts.length) return tree;
      const key = `${tree} ${depth}`;
      const known = entries.get(key);
      if (known !== undefined) return known;
      await step();
      const next = (await this.tree(tree)).find((e) => e.name === parts[depth]);
      const found = !next
        ? null
        : depth === parts.length - 1
          ? next.id
          : next.mode === '40000'
            ? await entryBelow(next.id, depth + 1)
            : null;
      entries.set(key, found);
      return found;
    };
    const pathOf = async (id: string) => {
      await step();
      if (filePath === undefined) return null;
      await readIfMissing(id);
      return entryBelow((await this.commit(id)).tree, 0);
    };
    while (queue.size) {
      await step();
      const { id } = queue.pop()!;
      taken++;
      const c = await commitOf(id);
      const followed = firstParent ? c.parents.slice(0, 1) : c.parents;
      let parents = followed;
      let shown = true;
      if (filePath !== undefined) {
        const mine = await pathOf(id);
        // The first parent with the path as this commit has it, looked at one by one.
        let same = -1;
        for (let i = 0; i < followed.length && same === -1; i++) if ((await pathOf(followed[i])) === mine) same = i;
        if (same !== -1) {
          shown = false;
          parents = [followed[same]];
        } else shown = followed.length > 0 || mine !== null;
      }
      if (shown && !visit(infoOf(id, c))) return;
      for (const p of parents) {
        if (seen.has(p)) continue;
        seen.add(p);
        await push(p);
      }
    }
  }
}

function infoOf(id: string, c: Awaited<ReturnType<GitRepository['commit']>>): CommitInfo {
  return {
    id,
    authorName: c.author.name,
    authorEmail: c.author.email,
    authoredAt: c.author.iso,
    committerName: c.committer.name,
    committerEmail: c.committer.email,
    committedAt: c.committer.iso,
    parents: c.parents,
    message: c.message,
  };
}

// A large object's body as parts (migration 0009). One row of tens of mebibytes held the event loop while it
// was written: better-sqlite3 runs a statement and its commit synchronously (SQLite copies the row into
// pages, then writes and syncs them, and checkpoints them), and pg encodes a bytea parameter as hex text in
// one go. So a body from PART_BYTES on is written as parts of at most PART_BYTES, each in a short statement
// of its own, *before* the transaction that stores the object row naming them. That transaction also deletes
// the upload's row: an upload row still there is a write that never committed (refused, failed or killed),
// and its parts are removed by the writer when it gives up, or else by its node's next start (or after a day,
// whichever node starts). Readers never see parts no object names.
//
// Between two parts the event loop takes its turn (nextTurn): better-sqlite3 answers at once, so awaiting
// one statement after another would otherwise run them all in one go, as microtasks, holding the loop as
// long as the single statement did.
import os from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import { checkpointWal } from '../db/database.ts';
import type { Database } from '../db/schema.ts';
import { isProcessAlive } from '../leftovers.ts';

/**
 * The largest part, and the size of body from which a body is kept in parts. Small, because each part's commit
 * is synced to disk on the event loop (SQLite): on a busy disk here, a 256 KiB part took 7 ms (at most 96),
 * a 1 MiB one 32 ms (at most 130), a 32 MiB row 830 ms.
 */
export const PART_BYTES = 256 * 1024;
/** Parts between two checkpoints: 2 MiB, well under the 1,000 pages at which SQLite checkpoints on its own. */
const CHECKPOINT_PARTS = 8;
/** An upload left by a node that may still be running (another host) is removed only this long after it began. */
const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000;

/**
 * Writes one body's parts as its deflated bytes come, a part a statement: begun by the first write, `end()`
 * answers the upload that names them. `id` is known from the first write on, so a writer that fails part-way
 * can still be discarded.
 */
export class PartWriter {
  id: number | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async write(bytes: Buffer): Promise<void> {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    while (this.pendingBytes >= PART_BYTES) await this.flush(PART_BYTES);
  }

  async end(): Promise<number> {
    if (this.pendingBytes > 0 || this.id === null) await this.flush(this.pendingBytes);
    await checkpointWal(this.db).catch(() => {});
    return this.id!;
  }

  private async flush(size: number): Promise<void> {
    const joined = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    const part = joined.subarray(0, size);
    const rest = joined.subarray(size);
    this.pending = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
    this.id ??= await beginUpload(this.db);
    const row = { upload_id: this.id, seq: this.seq++, data: part };
    await this.db.connection().execute(async (connection) => {
      if (!isSqlite(connection)) return void (await connection.insertInto('git_object_parts').values(row).execute());
      // Not synced to disk on its own: the commit that makes the object reachable syncs the log (WAL) that
      // holds this part, or a checkpoint synced it already. A sync a part, on the event loop, took 25 to
      // 300 ms each on a busy disk here, and a push of 48 MiB a minute.
      await sql`PRAGMA synchronous = NORMAL`.execute(connection);
      try {
        await connection.insertInto('git_object_parts').values(row).execute();
      } finally {
        await sql`PRAGMA synchronous = FULL`.execute(connection);
      }
    });
    // Every few parts the log goes into the database file off the event loop, and is synced there: neither an
    // automatic checkpoint nor the sync of the commit that names the parts holds the event loop for all of them.
    if (this.seq % CHECKPOINT_PARTS === 0) await checkpointWal(this.db).catch(() => {});
    await nextTurn();
  }
}

const isSqlite = (db: Kysely<Database>) => db.getExecutor().adapter instanceof SqliteAdapter;

async function beginUpload(db: Kysely<Database>): Promise<number> {
  const row = await db
    .insertInto('git_uploads')
    .values({ host: os.hostname(), pid: process.pid, started_at: new Date().toISOString() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A deflated body already whole in memory, written as parts (see PartWriter); answers its upload. */
export async function uploadParts(db: Kysely<Database>, deflated: Buffer): Promise<number> {
  const writer = new PartWriter(db);
  try {
    for (let at = 0; at < deflated.length; at += PART_BYTES) await writer.write(deflated.subarray(at, at + PART_BYTES));
    return await writer.end();
  } catch (error) {
    if (writer.id !== null) await discardUploads(db, [writer.id]);
    throw error;
  }
}

/**
 * Marks uploads as named by stored objects; call in the transaction that stores them. Only those an object
 * row of this repository names: an object the repository had already keeps its own body, and the upload made
 * for it again stays unclaimed, to be discarded.
 */
export async function claimUploads(db: Kysely<Database>, repositoryId: number, uploads: number[]): Promise<void> {
  if (!uploads.length) return;
  await db
    .deleteFrom('git_uploads')
    .where('id', 'in', uploads)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('git_objects')
        .select('parts')
        .where('repository_id', '=', repositoryId)
        .where('parts', 'in', uploads),
    )
    .execute();
}

/**
 * Removes the uploads of `ids` that no stored object claimed, with their parts, a part a statement (as they
 * were written). Call once the transaction that would have claimed them has ended, committed or not.
 */
export async function discardUploads(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  for (const id of ids) {
    const open = await db.selectFrom('git_uploads').select('id').where('id', '=', id).executeTakeFirst();
    if (!open) continue;
    for (;;) {
      const part = await db
        .selectFrom('git_object_parts')
        .select('seq')
        .where('upload_id', '=', id)
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!part) break;
      await db.deleteFrom('git_object_parts').where('upload_id', '=', id).where('seq', '=', part.seq).execute();
      await nextTurn();
    }
    await db.deleteFrom('git_uploads').where('id', '=', id).execute();
  }
}

/**
 * Discards the uploads that can no longer commit: this host's whose process is gone (or that carry this
 * process's pid from before it started: a container's server is pid 1 every time), and any host's begun over
 * a day ago. At start-up; answers how many went.
 */
export async function discardAbandonedUploads(db: Kysely<Database>): Promise<number> {
  const rows = await db.selectFrom('git_uploads').select(['id', 'host', 'pid', 'started_at']).execute();
  const staleBefore = new Date(Date.now() - STALE_UPLOAD_MS).toISOString();
  const startedAt = new Date(Date.now() - performance.now()).toISOString();
  const host = os.hostname();
  const gone = (r: (typeof rows)[number]) =>
    r.pid === process.pid ? r.started_at < startedAt : !isProcessAlive(r.pid);
  const abandoned = rows.filter((r) => (r.host === host && gone(r)) || r.started_at < staleBefore).map((r) => r.id);
  await discardUploads(db, abandoned);
  return abandoned.length;
}

/**
 * Runs `work` (which ends with the transaction storing what it uploaded) with `upload`, which writes a
 * deflated body from PART_BYTES on as parts and answers its upload (undefined for a smaller body, kept in its
 * row). Once `work` is over, whatever it uploaded that no stored object claimed is discarded.
 */
export async function withUploads<T>(
  db: Kysely<Database>,
  work: (upload: (deflated: Buffer) => Promise<number | undefined>) => Promise<T>,
): Promise<T> {
  const uploads: number[] = [];
  try {
    return await work(async (deflated) => {
      if (deflated.length < PART_BYTES) return undefined;
      const id = await uploadParts(db, deflated);
      uploads.push(id);
      return id;
    });
  } finally {
    // What cannot be discarded now (the database gone meanwhile) is discarded at the next start.
    await discardUploads(db, uploads).catch(() => {});
  }
}

/** A large object's deflated body, its parts joined (a part a statement). */
export async function readParts(db: Kysely<Database>, upload: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of partsOf(db, upload)) parts.push(part);
  return Buffer.concat(parts);
}

/** A large object's deflated body, a part at a time (a part a statement). */
export async function* partsOf(db: Kysely<Database>, upload: number): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const part = await db
      .selectFrom('git_object_parts')
      .select('data')
      .where('upload_id', '=', upload)
      .where('seq', '=', seq)
      .executeTakeFirst();
    if (!part) return;
    yield part.data;
    await nextTurn();
  }
}

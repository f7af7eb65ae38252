// SQLite's search index, kept off the write transactions (migration 0012). A write's triggers only queue
// work in search_index_queue (cheap); `indexStep` does that work a little at a time, each call one short
// transaction on a connection of its own (sqlite-background-worker.ts, in a thread; the main connection for an
// in-memory database). FTS5 with the trigram tokenizer costs per distinct trigram: a 1 MiB file of random
// text took 2.4 s in one insert, so the text goes in as pieces of PIECE_UNITS, and the segment merges FTS5
// would run inside some insert (460 ms seen) are run here in small explicit steps instead (automerge is off).
//
// Both FTS tables are contentless: a row is a piece, its rowid worked out from the source's id and the piece's
// number (pieceRowid; sources: snippet_file_text rows for snippet_file_text_fts, snippets for snippet_fields_fts).
// Consecutive pieces overlap by OVERLAP_UNITS, and searches look for at most MAX_PHRASE_UNITS of their text,
// so any occurrence of what they look for lies whole in one piece.
import type SQLite from 'better-sqlite3';

/** UTF-16 code units in a piece (8 KiB of ASCII): one insert of random text then takes a few milliseconds. */
export const PIECE_UNITS = 8192;
/** A search asks FTS5 for the trigrams of at most this much of its text; every candidate is checked exactly. */
export const MAX_PHRASE_UNITS = 64;
/** Pieces start this far apart: any MAX_PHRASE_UNITS window lies whole in one (one unit spare for a surrogate). */
const STEP_UNITS = PIECE_UNITS - MAX_PHRASE_UNITS - 1;
/** Pieces a source may have in its rowid range; a longer text's last piece takes the rest (never at 1 MiB). */
export const MAX_PIECES = 1024;

/**
 * Where a source's pieces are: piece 0 at the source's id, so that consecutive sources are consecutive rows; the
 * later pieces from LATER_PIECES on, MAX_PIECES rowids a source. An index without positions (migration 0018)
 * stores little but each row's distance from the one before: sources MAX_PIECES apart took twice the space
 * (200,000 texts: 15.9 MiB, 7.7 consecutive).
 */
export const LATER_PIECES = 2 ** 40;
export const pieceRowid = (source: number, k: number) => (k === 0 ? source : LATER_PIECES + source * MAX_PIECES + k);
/** The source of an FTS row, in SQL (the inverse of pieceRowid). */
export const SOURCE_OF_ROWID = `CASE WHEN rowid < ${LATER_PIECES} THEN rowid ELSE (rowid - ${LATER_PIECES}) / ${MAX_PIECES} END`;
/** Pages of merge work per merge command: a few milliseconds each. */
const MERGE_PAGES = 16;

export type SourceKind = 'file' | 'fields';
export const FTS_TABLE: Record<SourceKind, string> = { file: 'snippet_file_text_fts', fields: 'snippet_fields_fts' };

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
/** A boundary moved back off the middle of a surrogate pair. */
const boundary = (text: string, at: number) =>
  at > 0 && at < text.length && isLowSurrogate(text.charCodeAt(at)) ? at - 1 : Math.min(at, text.length);

export function pieceCount(text: string): number {
  const n = text.length <= PIECE_UNITS ? 1 : 1 + Math.ceil((text.length - PIECE_UNITS) / STEP_UNITS);
  return Math.min(n, MAX_PIECES);
}

/** The text of piece `k` of `count`. */
export function pieceOf(text: string, k: number, count: number): string {
  const start = boundary(text, k * STEP_UNITS);
  const end = k === count - 1 ? text.length : boundary(text, k * STEP_UNITS + PIECE_UNITS);
  return text.slice(start, end);
}

/** What a search asks FTS5 for (its trigrams): at most MAX_PHRASE_UNITS of the text, never half a surrogate pair. */
export function phraseText(text: string): string {
  return text.length <= MAX_PHRASE_UNITS ? text : text.slice(0, boundary(text, MAX_PHRASE_UNITS));
}

interface QueuedWork {
  id: number;
  op: 'index' | 'delete';
  kind: SourceKind;
  source_id: number;
  next_piece: number;
}

/** A source's row: a snippet_file_text row's path and content, or a snippet's title, description and file name. */
export type SourceRow =
  | { kind: 'file'; path: string; content: string }
  | { kind: 'fields'; title: string | null; description: string | null; file_name: string | null };

/** A source's pieces: how many, and the columns of piece `k` in its FTS table's column order (piece 0 has the short ones). */
export function sourcePieces(row: SourceRow): { count: number; columns: (k: number) => (string | null)[] } {
  if (row.kind === 'file') {
    const count = pieceCount(row.content);
    return { count, columns: (k) => [k === 0 ? row.path : null, pieceOf(row.content, k, count)] };
  }
  const description = row.description ?? '';
  const count = pieceCount(description);
  return {
    count,
    columns: (k) => [k === 0 ? row.title : null, pieceOf(description, k, count), k === 0 ? row.file_name : null],
  };
}

/** The pieces of the source with that id as it is stored; null when it is gone. */
function storedSourcePieces(sqlite: SQLite.Database, kind: SourceKind, id: number) {
  const row =
    kind === 'file'
      ? (sqlite.prepare('SELECT path, content FROM snippet_file_text WHERE id = ?').get(id) as
          | { path: string; content: string }
          | undefined)
      : (sqlite.prepare('SELECT title, description, file_name FROM snippets WHERE id = ?').get(id) as
          | { title: string | null; description: string | null; file_name: string | null }
          | undefined);
  return row ? sourcePieces({ kind, ...row } as SourceRow) : null;
}

function indexedPieces(sqlite: SQLite.Database, kind: SourceKind, id: number): number {
  const row = sqlite.prepare('SELECT pieces FROM search_index_pieces WHERE kind = ? AND source_id = ?').get(kind, id) as
    | { pieces: number }
    | undefined;
  return row?.pieces ?? 0;
}

function setIndexedPieces(sqlite: SQLite.Database, kind: SourceKind, id: number, pieces: number) {
  if (pieces === 0) sqlite.prepare('DELETE FROM search_index_pieces WHERE kind = ? AND source_id = ?').run(kind, id);
  else
    sqlite
      .prepare(`INSERT INTO search_index_pieces (kind, source_id, pieces) VALUES (?, ?, ?)
        ON CONFLICT (kind, source_id) DO UPDATE SET pieces = excluded.pieces`)
      .run(kind, id, pieces);
}

/**
 * The source each connection's last step read, by its queued work: the steps after it take their pieces from it. Read again
 * at every step, a text of 8 MB that is not ASCII took longer to read than a step's budget, so each step added
 * one piece (22 s for the file). A change to the source since queues a delete of its pieces and new work after
 * this, as a delete of the source does.
 */
const lastRead = new WeakMap<SQLite.Database, { work: number; source: ReturnType<typeof sourcePieces> }>();

/** Adds pieces of the queued source to its FTS table until `deadline`; true when the source is done. */
function indexSome(sqlite: SQLite.Database, work: QueuedWork, deadline: number): boolean {
  // By connection: a thread (or the main thread, for in-memory databases) indexes every database its process
  // opened, and work ids are a database's own.
  const read = lastRead.get(sqlite);
  const source = read?.work === work.id ? read.source : storedSourcePieces(sqlite, work.kind, work.source_id);
  lastRead.delete(sqlite);
  if (!source) return true; // deleted since: its delete follows in the queue
  const table = FTS_TABLE[work.kind];
  const columns = work.kind === 'file' ? 'path, content' : 'title, description, file_name';
  const insert = sqlite.prepare(
    `INSERT OR REPLACE INTO ${table} (rowid, ${columns}) VALUES (?, ${work.kind === 'file' ? '?, ?' : '?, ?, ?'})`,
  );
  let k = work.next_piece;
  while (k < source.count) {
    insert.run(pieceRowid(work.source_id, k), ...source.columns(k));
    k++;
    if (performance.now() >= deadline) break;
  }
  setIndexedPieces(sqlite, work.kind, work.source_id, Math.max(k, indexedPieces(sqlite, work.kind, work.source_id)));
  if (k < source.count) {
    sqlite.prepare('UPDATE search_index_queue SET next_piece = ? WHERE id = ?').run(k, work.id);
    lastRead.set(sqlite, { work: work.id, source });
    return false;
  }
  return true;
}

/** Deletes the source's pieces from its FTS table, the last first, until `deadline`; true when none is left. */
function deleteSome(sqlite: SQLite.Database, work: QueuedWork, deadline: number): boolean {
  let pieces = indexedPieces(sqlite, work.kind, work.source_id);
  const remove = sqlite.prepare(`DELETE FROM ${FTS_TABLE[work.kind]} WHERE rowid = ?`);
  while (pieces > 0) {
    pieces--;
    remove.run(pieceRowid(work.source_id, pieces));
    if (performance.now() >= deadline) break;
  }
  setIndexedPieces(sqlite, work.kind, work.source_id, pieces);
  return pieces === 0;
}

/** One merge command on an FTS table; whether it merged anything. */
function mergeStep(sqlite: SQLite.Database, table: string): boolean {
  const changes = sqlite.prepare('SELECT total_changes() AS n').pluck();
  const before = changes.get() as number;
  sqlite.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ?)`).run(MERGE_PAGES);
  return (changes.get() as number) - before > 1;
}

/**
 * Queued work and merges for about `budgetMs` (a piece or a merge command may overrun it by a few
 * milliseconds), in the caller's transaction. Answers whether anything is left to do.
 */
export function indexStep(sqlite: SQLite.Database, budgetMs: number): { idle: boolean } {
  const deadline = performance.now() + budgetMs;
  const head = sqlite.prepare('SELECT id, op, kind, source_id, next_piece FROM search_index_queue ORDER BY id LIMIT 1');
  for (;;) {
    const work = head.get() as QueuedWork | undefined;
    if (!work) break;
    const done = work.op === 'index' ? indexSome(sqlite, work, deadline) : deleteSome(sqlite, work, deadline);
    if (done) sqlite.prepare('DELETE FROM search_index_queue WHERE id = ?').run(work.id);
    if (performance.now() >= deadline) return { idle: false };
  }
  // Merges after the pieces (and between steps while pieces keep coming), so that segments never pile up.
  for (const table of Object.values(FTS_TABLE)) {
    while (mergeStep(sqlite, table)) {
      if (performance.now() >= deadline) return { idle: false };
    }
  }
  // The pages the queue's rows and merged segments no longer use go back to the file system, a few a step:
  // a million snippets' indexing left 33 MiB of the file free.
  if (pagesToGiveBack(sqlite)) {
    sqlite.pragma(`incremental_vacuum(${FREE_PAGES_KEPT})`);
    return { idle: false };
  }
  // The queue is empty: the next step waits for the next look at it, so that what a stream of writes queues
  // meanwhile is indexed together, not one write at a time, each step taking the write lock from the next.
  return { idle: true };
}

/** Free pages kept for reuse (2 MiB of 4 KiB pages), and given back at most at once (a few milliseconds). */
const FREE_PAGES_KEPT = 512;

/** Whether the database (made with auto_vacuum = INCREMENTAL: database.ts) has more free pages than it keeps. */
function pagesToGiveBack(sqlite: SQLite.Database): boolean {
  return (
    sqlite.pragma('auto_vacuum', { simple: true }) === 2 &&
    (sqlite.pragma('freelist_count', { simple: true }) as number) > FREE_PAGES_KEPT
  );
}

/** Runs `indexStep` in a transaction of its own on `sqlite`. */
export function indexStepTransaction(sqlite: SQLite.Database, budgetMs: number): { idle: boolean } {
  return sqlite.transaction(() => indexStep(sqlite, budgetMs)).immediate();
}

/** Whether anything is queued, or free pages to give back (read without the write lock, to know whether to take it). */
export function hasQueuedWork(sqlite: SQLite.Database): boolean {
  return (
    sqlite.prepare('SELECT EXISTS (SELECT 1 FROM search_index_queue) AS queued').pluck().get() === 1 ||
    pagesToGiveBack(sqlite)
  );
}

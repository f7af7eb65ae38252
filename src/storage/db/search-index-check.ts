// SQLite's full-text index checked against the rows it is made of (for `snippetd fsck`, domain/fsck.ts): each
// source (a snippet_file_text row, a snippet's searched fields) that is not queued must have its pieces
// (search-indexing.ts) in its FTS table, no more, as search_index_pieces says, and nothing may be left of a
// source that is gone. The tables are contentless, so a piece's text cannot be read back, and a phrase query
// per piece costs as much as a search of a common word; a piece is compared by what FTS5 keeps of it in
// `<table>_docsize`: its number of trigrams in each column (a text's characters less two). Queued work is
// not a fault: the indexer has still to do it, and the check leaves it alone.
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.ts';
import {
  FTS_TABLE,
  LATER_PIECES,
  MAX_PIECES,
  pieceRowid,
  type SourceKind,
  type SourceRow,
  sourcePieces,
} from './search-indexing.ts';
import { codePoints } from '../../text-scan.ts';

/** Sources whose FTS rows are checked a batch at a time when looking for those of sources gone. */
const LEFTOVER_BATCH = 1000;

const docsize = (kind: SourceKind) => sql.table(`${FTS_TABLE[kind]}_docsize`);

/** The trigrams FTS5's trigram tokenizer makes of a column's text. */
const trigrams = (text: string | null) => (text === null ? 0 : Math.max(0, codePoints(text) - 2));

/** FTS5's column sizes (`<table>_docsize.sz`): one SQLite varint per column. */
function columnSizes(sz: Uint8Array): number[] {
  const sizes: number[] = [];
  let i = 0;
  while (i < sz.length) {
    let value = 0;
    for (let n = 0; i < sz.length; n++) {
      const byte = sz[i++];
      if (n === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if (!(byte & 0x80)) break;
    }
    sizes.push(value);
  }
  return sizes;
}

async function isQueued(db: Kysely<Database>, kind: SourceKind, id: number): Promise<boolean> {
  const { rows } = await sql`SELECT 1 FROM search_index_queue WHERE kind = ${kind} AND source_id = ${id}`.execute(db);
  return rows.length > 0;
}

/** The FTS rows of a source: piece number and column sizes (piece 0 at its id, the others in its range above). */
async function storedPieces(db: Kysely<Database>, kind: SourceKind, id: number) {
  const later = pieceRowid(id, 1) - 1;
  const { rows } = await sql<{ id: number; sz: Uint8Array }>`SELECT id, sz FROM ${docsize(kind)}
    WHERE id = ${id} OR id BETWEEN ${later + 1} AND ${later + MAX_PIECES - 1} ORDER BY id`.execute(db);
  return rows.map((r) => ({ piece: Number(r.id) === id ? 0 : Number(r.id) - later, sizes: columnSizes(r.sz) }));
}

async function recordedPieces(db: Kysely<Database>, kind: SourceKind, id: number): Promise<number> {
  const { rows } = await sql<{ pieces: number }>`SELECT pieces FROM search_index_pieces
    WHERE kind = ${kind} AND source_id = ${id}`.execute(db);
  return rows.length ? Number(rows[0].pieces) : 0;
}

/**
 * How the source's full-text index differs from its row (at most a line), or null when it agrees or is
 * queued. Call in a transaction (the indexer's are IMMEDIATE: it does not move meanwhile).
 */
export async function fullTextDifference(db: Kysely<Database>, id: number, row: SourceRow): Promise<string | null> {
  if (await isQueued(db, row.kind, id)) return null;
  const expected = sourcePieces(row);
  const stored = await storedPieces(db, row.kind, id);
  const recorded = await recordedPieces(db, row.kind, id);
  const problems: string[] = [];
  const missing: number[] = [];
  const differing: number[] = [];
  for (let k = 0; k < expected.count; k++) {
    const piece = stored.find((p) => p.piece === k);
    if (!piece) missing.push(k);
    else if (expected.columns(k).some((text, column) => (piece.sizes[column] ?? 0) !== trigrams(text)))
      differing.push(k);
  }
  const extra = stored.filter((p) => p.piece >= expected.count).map((p) => p.piece);
  if (missing.length) problems.push(`missing pieces ${missing.join(', ')} of ${expected.count}`);
  if (differing.length) problems.push(`pieces ${differing.join(', ')} hold text of another length`);
  if (extra.length) problems.push(`pieces ${extra.join(', ')} beyond its ${expected.count}`);
  if (recorded !== expected.count) problems.push(`search_index_pieces says ${recorded}, not ${expected.count}`);
  return problems.length ? `full-text index: ${problems.join('; ')}` : null;
}

/**
 * Removes everything of the source from its FTS table and queues it to be indexed again when it still
 * exists (`row`), as a write would: a server's indexer takes it in.
 */
export async function requeueSource(db: Kysely<Database>, kind: SourceKind, id: number, row: SourceRow | null) {
  for (const { piece } of await storedPieces(db, kind, id))
    await sql`DELETE FROM ${sql.table(FTS_TABLE[kind])} WHERE rowid = ${pieceRowid(id, piece)}`.execute(db);
  await sql`DELETE FROM search_index_pieces WHERE kind = ${kind} AND source_id = ${id}`.execute(db);
  if (!row) return;
  const text = row.kind === 'file' ? [row.path, row.content] : [row.title, row.description, row.file_name];
  const bytes = text.reduce((sum, t) => sum + Buffer.byteLength(t ?? ''), 0);
  await sql`INSERT INTO search_index_queue (op, kind, source_id, text_bytes)
    VALUES ('index', ${kind}, ${id}, ${bytes})`.execute(db);
}

/**
 * Sources of `kind` with FTS rows or a search_index_pieces row though they are gone and not queued for
 * deletion: a batch of them from the ids after `after` (null when there are no more ids), walking the
 * FTS rows and the pieces table by id.
 */
export async function goneSources(
  db: Kysely<Database>,
  kind: SourceKind,
  after: number,
): Promise<{ gone: number[]; next: number | null }> {
  // Pieces 0 (at their sources' ids), later pieces (in their sources' ranges above LATER_PIECES), and the
  // recorded counts, each walked in their sources' order.
  const { rows: first } = await sql<{ id: number }>`SELECT id FROM ${docsize(kind)}
    WHERE id > ${after} AND id < ${LATER_PIECES} ORDER BY id LIMIT ${LEFTOVER_BATCH}`.execute(db);
  const { rows: later } = await sql<{ id: number }>`SELECT id FROM ${docsize(kind)}
    WHERE id >= ${pieceRowid(after + 1, 1) - 1} ORDER BY id LIMIT ${LEFTOVER_BATCH}`.execute(db);
  const { rows: recorded } = await sql<{ source_id: number }>`SELECT source_id FROM search_index_pieces
    WHERE kind = ${kind} AND source_id > ${after} ORDER BY source_id LIMIT ${LEFTOVER_BATCH}`.execute(db);
  const fromFirst = first.map((r) => Number(r.id));
  const fromLater = later.map((r) => Math.floor((Number(r.id) - LATER_PIECES) / MAX_PIECES));
  const fromRecorded = recorded.map((r) => Number(r.source_id));
  // Up to the lowest of the full batches' last ids: every list is whole below it.
  const full = [fromFirst, fromLater, fromRecorded]
    .filter((l) => l.length === LEFTOVER_BATCH)
    .map((l) => l[l.length - 1]);
  const upTo = full.length ? Math.min(...full) : Number.POSITIVE_INFINITY;
  const sources = [...new Set([...fromFirst, ...fromLater, ...fromRecorded])]
    .filter((s) => s <= upTo)
    .sort((a, b) => a - b);
  if (!sources.length) return { gone: [], next: null };
  const table = sql.table(kind === 'file' ? 'snippet_file_text' : 'snippets');
  const { rows: present } = await sql<{ id: number }>`SELECT id FROM ${table}
    WHERE id IN (${sql.join(sources)})`.execute(db);
  const { rows: queued } = await sql<{ source_id: number }>`SELECT source_id FROM search_index_queue
    WHERE kind = ${kind} AND source_id IN (${sql.join(sources)})`.execute(db);
  const kept = new Set([...present.map((r) => Number(r.id)), ...queued.map((r) => Number(r.source_id))]);
  return {
    gone: sources.filter((s) => !kept.has(s)),
    next: upTo === Number.POSITIVE_INFINITY ? null : sources[sources.length - 1],
  };
}

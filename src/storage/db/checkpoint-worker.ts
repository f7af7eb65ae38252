// SQLite's WAL checkpoints, in a worker thread (wal-checkpoints.ts): one copies the log's pages into the
// database file and syncs both, which held the event loop up to 200 ms a time on a busy disk. Run through tsx
// from src/; built as storage/db/checkpoint-worker.js (scripts/build.mjs).
import SQLite from 'better-sqlite3';

/** A connection of this thread's own per database file, kept between checkpoints. */
const connections = new Map<string, SQLite.Database>();

export interface CheckpointResult {
  /** Frames in the log, and how many of them are in the database file now (SQLite's wal_checkpoint). */
  log: number;
  checkpointed: number;
}

export default function checkpoint(file: string): CheckpointResult {
  let connection = connections.get(file);
  if (!connection) {
    connection = new SQLite(file, { fileMustExist: true });
    connection.pragma('synchronous = FULL');
    connections.set(file, connection);
  }
  // PASSIVE: as much as no reader or writer needs, never waiting for one, so that none waits for it either.
  const [row] = connection.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
  return { log: row.log, checkpointed: row.checkpointed };
}
